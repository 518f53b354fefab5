# K resident child runs (`reduce-scan-bench serve`, src/run/Serve.h) at once, each sent the same
# case list twice (first: its context and, with a cold kernel cache, its builds; again: warm):
# how long a list takes when K residents run it together (docs/BENCHMARKS.md, "Grading
# throughput"). python3 serve_probe.py BINARY LIST.json[,LIST2.json] K[,K...] [--platform P]
import json, os, socket, subprocess, sys, time, threading
B = os.path.abspath(sys.argv[1]); lists = sys.argv[2].split(','); Ks = [int(k) for k in sys.argv[3].split(',')]
plat = sys.argv[4:]
def start():
    a, b = socket.socketpair()
    p = subprocess.Popen(['/bin/sh', '-c', 'exec "$0" serve 3<&0', B], stdin=b.fileno(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    b.close(); return p, a
def ask(s, lst, i):
    out = f'/tmp/sp-{i}.json'
    argv = [B, '--kernels', 'kernels', '--cases', lst, '--check', '--no-isolate', '--validate-runs', '2', '--seed', '1',
            '--format', 'json', '--output', out, '-q', '--no-profile'] + plat
    s.sendall((json.dumps({'argv': argv, 'dir': os.getcwd(), 'out': f'/tmp/sp-o{i}', 'err': f'/tmp/sp-e{i}'}) + '\n').encode())
    buf = b''
    while not buf.endswith(b'\n'):
        c = s.recv(100)
        if not c: return 'died'
        buf += c
    return json.loads(buf)['exit']
for K in Ks:
    servers = [start() for _ in range(K)]
    for lst in lists:
        res = [None] * K; t = [0] * K
        def go(i):
            t0 = time.time(); res[i] = ask(servers[i][1], lst, i); t[i] = time.time() - t0
        for rnd in ('first (context, builds)', 'again (warm)'):
            th = [threading.Thread(target=go, args=(i,)) for i in range(K)]
            t0 = time.time(); [x.start() for x in th]; [x.join() for x in th]
            print(f'K={K:2d} {os.path.basename(lst):10s} {rnd:24s} batch {time.time()-t0:6.2f} s  each med {sorted(t)[K//2]:5.2f} max {max(t):5.2f}  exits {set(res)}', flush=True)
    for p, s in servers: s.close(); p.wait()
