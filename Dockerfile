# ares node image: one static binary FROM scratch (no base image is pulled).
#
# The binary is built on the host first (tests/docker/cluster.sh does this):
#   RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --target x86_64-unknown-linux-gnu
# then:
#   docker build -t ares:latest .
# (`--build-arg BIN=target/x86_64-unknown-linux-gnu/docker-test/ares` takes the binary of the
# cluster test's cheaper profile instead.)
FROM scratch
ARG BIN=target/x86_64-unknown-linux-gnu/release/ares
COPY ${BIN} /ares
COPY config/ /config/
ENV RUST_LOG=info
EXPOSE 7700 7800 8080
ENTRYPOINT ["/ares", "node"]
CMD ["--role", "supervisor", "--config", "/config/docker-supervisor.yml"]
