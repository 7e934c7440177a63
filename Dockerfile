# ares node image FROM scratch (no base image is pulled): the root staged by
# scripts/docker-image.sh in target/docker-root (the binary as /ares, and the C libraries it
# links when it is not static), and config/.
#
#   bash scripts/docker-image.sh     # a static release binary, then this image as ares:latest
FROM scratch
COPY target/docker-root/ /
COPY config/ /config/
ENV RUST_LOG=info
EXPOSE 7700 7800 8080
ENTRYPOINT ["/ares", "node"]
CMD ["--role", "supervisor", "--config", "/config/docker-supervisor.yml"]
