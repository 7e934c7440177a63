#!/bin/bash
# The cost of TLS in the bundled clients (RELIABILITY.md, bounded HTTP, row 7): two one-worker
# clusters on loopback, the web API over HTTPS (a fresh self-signed certificate) and over HTTP;
# N runs of `ares run --supervisor URL` against each (wall time per run), and with PY=<python
# with the ares package> the same for `ar.connect` and a compute on a kept connection.
#   cargo build --bin ares && N=20 PY=.venv/bin/python bash scripts/bench_https.sh
set -e
B=${ARES_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/debug/ares}; N=${N:-20}; D=$(mktemp -d)
cd $D
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -addext basicConstraints=critical,CA:FALSE -keyout key.pem -out cert.pem 2>/dev/null
export ARES_TOKEN=bench-t0ken
printf 'cluster:\n  listen: 127.0.0.1:0\nweb:\n  listen: 127.0.0.1:0\n  token: bench-t0ken\n  tls_cert: %s/cert.pem\n  tls_key: %s/key.pem\n' $D $D > tls.yml
printf 'cluster:\n  listen: 127.0.0.1:0\nweb:\n  listen: 127.0.0.1:0\n  token: bench-t0ken\n' > plain.yml
pids=()
for k in tls plain; do
  $B node --role supervisor --config $k.yml --ready-file $k.json 2>$k.log & pids+=($!)
  while [ ! -s $k.json ]; do sleep 0.05; done
  rpc=$(python3 -c "import json;print(json.load(open('$k.json'))['rpc'])")
  $B node --role worker --supervisor $rpc --ready-file $k.w.json 2>$k.w.log & pids+=($!)
  while [ ! -s $k.w.json ]; do sleep 0.05; done
done
tls=https://$(python3 -c "import json;print(json.load(open('tls.json'))['web'])")
plain=http://$(python3 -c "import json;print(json.load(open('plain.json'))['web'])")
echo "$tls $plain" > urls
for url in $plain $tls; do
  extra=(); [[ $url == https* ]] && extra=(--ca-file cert.pem)
  $B run --json --supervisor $url "${extra[@]}" --expr 'sum(arange(100, chunk=7))' >/dev/null  # warm
  s=$(date +%s.%N)
  for i in $(seq $N); do $B run --json --supervisor $url "${extra[@]}" --expr 'sum(arange(100, chunk=7))' >/dev/null; done
  e=$(date +%s.%N)
  python3 -c "print('$url', 'ares run x$N: %.1f ms per run' % (($e-$s)*1000/$N))"
done
if [ -n "$PY" ]; then $PY - $tls $plain $D/cert.pem <<'PYEOF'
import os, sys, time
import ares as ar
tls, plain, cert = sys.argv[1:4]
N = int(os.environ.get("N", "20"))
tok = os.environ["ARES_TOKEN"]
for url, kw in ((plain, {}), (tls, {"ca_file": cert})):
    ar.connect(url, token=tok, **kw); ar.close()
    t0 = time.perf_counter()
    for _ in range(N):
        ar.connect(url, token=tok, **kw); ar.close()
    t1 = time.perf_counter()
    ar.connect(url, token=tok, **kw)
    x = ar.arange(100, chunks=7).sum()
    float(x)
    t2 = time.perf_counter()
    for _ in range(N):
        float(ar.arange(100, chunks=7).sum())
    t3 = time.perf_counter()
    ar.close()
    print(f"{url}: connect (new agent, handshake + PUT session) x{N}: {(t1-t0)*1000/N:.2f} ms each; "
          f"compute sum(arange(100)) x{N} on one connection: {(t3-t2)*1000/N:.2f} ms each")
# The same https connect with only the one certificate trusted (no system bundle to parse).
os.environ["SSL_CERT_FILE"] = cert
t0 = time.perf_counter()
for _ in range(N):
    ar.connect(tls, token=tok); ar.close()
print(f"{tls} with SSL_CERT_FILE=cert.pem only: connect x{N}: {(time.perf_counter()-t0)*1000/N:.2f} ms each")
PYEOF
fi
kill ${pids[@]}; wait 2>/dev/null || true
rm -rf $D
