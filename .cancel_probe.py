import os, signal, threading, time, sys
import ares as ar
ar.set_progress(False)
ar.start(workers=1, slots=2)
long_job = ar.random.rand(10**10, chunks=10**6, seed=1).sum()
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t = time.monotonic()
try:
    long_job.compute()
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted after", time.monotonic() - t)
t = time.monotonic()
print(ar.arange(100).sum().compute(), "small job after", time.monotonic() - t)
