#!/usr/bin/env bash
# The Gated DeltaNet's output norm's 1 / rms in the output projection (rms_scaled_matmul after gdn_decode with norm = 0)
# against the norm in gdn_decode's step, one device call (the `device` tool; carries .devrun/, .gl/, .peers/ as
# scripts/device_e2e.sh expects): chained (ssm_scan's gdn_decode cases with the norm and with the gate alone in 1, 2, 4, 8
# parts; matmul_group's rms_scaled_matmul cases), then the decode stream (tg128: the norm in the step (decode.gdn_norm_parts
# 0) and 2 parts interleaved, then 4). Prints the chained times and the tg128 lines; returns $OUT/g.tar.gz (logs, JSON).
set -u
T0=$(date +%s)
[ -x .devrun/hybridlab ] || { xz -dc .devrun/hybridlab-main.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab; }
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=true HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT) TAIL=3
mkdir -p logs /tmp/gn
G=(experiment ssm_scan --full --gpu-only --no-sweep --chain 16 --runs 20 --cases '^gdn_decode T=1 ')
timeout 90 .devrun/hybridlab "${G[@]}" --out /tmp/gn --tag gn > logs/gn-ssm_scan.log 2>&1
timeout 90 .devrun/hybridlab experiment matmul_group --full --gpu-only --no-sweep --chain 16 --runs 20 --cases 'heads of 128' \
  --out /tmp/gn --tag gn > logs/gn-matmul_group.log 2>&1
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/gn/*/*-gn*.json')):
    d = json.load(open(f))
    for c in d['cases']:
        for r in c.get('results', []):
            if r.get('variant', '').startswith('vulkan'):
                t = r['time_us']
                print(f.split('/')[-1], c['op'], c.get('label', '')[:48], r['variant'], r.get('tuning', ''), round(t['median'], 2), round(t['min'], 2), round(t['max'], 2), r['status'])
PY
echo "chained done at $(( $(date +%s) - T0 )) s"
tar czf $OUT/g.tar.gz logs/gn-* /tmp/gn
STEPS=synth LOGTAG=s DEADLINE=90 bash scripts/device_e2e.sh > /dev/null 2>&1  # the full-size file (kept if there)
bench() {  # bench TAG PLAN [TUNE]
  HYBRIDLAB_TUNE=${3:-} PLAN=$2 STEPS=bench TAG=$1 LOGTAG=gn BENCH_P=16 RUNS=3 DEADLINE=100 bash scripts/device_e2e.sh > /dev/null 2>&1
  echo "$1: $(grep -h '^tg128 ' logs/bench-$1.log | head -1)"
  grep -h 'GPU .* ms per step' logs/bench-$1.log | tail -1
  grep -h '^  \(gdn_decode\|rms_scaled_matmul\|matmul\) ' logs/bench-$1.log | tail -3
}
# parts 0 keeps the norm in the step.
for i in 1 2 3; do
  bench step-$i '*=vulkan' decode.gdn_norm_parts=0
  bench parts2-$i '*=vulkan' decode.gdn_norm_parts=2
done
bench parts4 '*=vulkan' decode.gdn_norm_parts=4
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/g.tar.gz logs/gn-* logs/bench-* /tmp/gn reports/*/bench-*.json
