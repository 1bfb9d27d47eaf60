#!/bin/sh
# run44 (H200): session 13 final tree (mapped marker after review: pwrite, in-place file systems; launcher signals; table summaries): drop_root, SIGUSR1 under PyTorch, gpu suite, misuse, the whole corpus with the sample programs.
set -u
O=$OUT/run44
mkdir -p "$O"
cp "$0" "$O/run44.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
id; stat -f -c "/tmp: %T (0x%t)" /tmp
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; }
GC=build/graphcheck
B=/tmp/r44bin; mkdir -p "$B"
nvcc -g -o "$B/drop_root" tests/gpu/drop_root.cu > "$O/nvcc.txt" 2>&1
echo "== drop_root (root gives up root before its first CUDA call)"
for a in --clean ""; do
	"$B/drop_root" $a > "$O/drop_root$a.native.out" 2>&1; echo "native $a: exit $?"
	$GC --error-exitcode=9 --log-file="$O/drop_root$a.gc.txt" -- "$B/drop_root" $a > "$O/drop_root$a.gc.out" 2>&1
	echo "graphcheck $a: exit $?"; cat "$O/drop_root$a.gc.out"
	grep '^==graphcheck== [a-z]*:' "$O/drop_root$a.gc.txt"
done
echo "== SIGUSR1 to the launcher while a PyTorch program (its own handler: exit 5) runs CUDA"
cat > /tmp/usr1.py <<'PY'
import os, signal, sys, time, torch
signal.signal(signal.SIGUSR1, lambda s, f: (print("handler: exit 5", flush=True), os._exit(5)))
x = torch.ones(1 << 20, device="cuda")
open(sys.argv[1], "w").write(str(os.getpid()))
while True:
    x = x * 1.0001
    torch.cuda.synchronize()
    time.sleep(0.01)
PY
rm -f /tmp/usr1.pid
$GC --error-exitcode=9 --log-file="$O/usr1.gc.txt" -- python3 /tmp/usr1.py /tmp/usr1.pid > "$O/usr1.out" 2>&1 &
L=$!
for k in $(seq 600); do [ -s /tmp/usr1.pid ] && break; sleep 0.1; done
sleep 1; kill -USR1 $L; wait $L; echo "launcher status $? (want 5); program alive after: $(kill -0 $(cat /tmp/usr1.pid) 2>/dev/null && echo yes || echo no)"; cat "$O/usr1.out"
echo "== H200 suite (tests/gpu/run.sh)"
timeout 240 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; tail -25 "$O/gpu.txt"
echo "== misuse suite"
OUT=$O timeout 200 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; tail -30 "$O/misuse.txt"
echo "== corpus"
timeout 300 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -30 "$O/corpus.txt"
echo "== a marker mapped? /proc/PID/maps of a program under the launcher"
$GC -- sh -c 'grep started /proc/$$/maps; ls -l /proc/$$/fd | wc -l'
date -u
