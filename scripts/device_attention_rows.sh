#!/usr/bin/env bash
# attention's prompt kernels side by side, one device call (the `device` tool; carries .devrun/, .gl/, .peers/ as
# scripts/device_e2e.sh expects): vulkan:flash_coopmat (the default's kernel) and vulkan:flash_rows (16 query rows per
# subgroup) at its default and other tunings (ROWS_TUNES), on the experiment's 512-query cases (empty cache; after
# 3584 keys), RUNS runs each; then pp512 with attention.tiled.coopmat 1 (flash_coopmat) and 2 (flash_rows)
# interleaved (PAIRS pairs; 0: none). EXP_FLAGS: more experiment flags (e.g. --dispatches). Prints each setting's times; returns $OUT/ar.tar.gz (logs, JSON reports).
set -u
T0=$(date +%s)
[ -x .devrun/hybridlab ] || { xz -dc .devrun/hybridlab-main.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab; }
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=true HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT) TAIL=3
mkdir -p logs /tmp/ar
A=(experiment attention --full --gpu-only --no-sweep --runs ${RUNS:-20} --cases '^prefill T=512( ctx=4096)?$' ${EXP_FLAGS:-})
run() {  # run TAG VARIANT [TUNE]
  HYBRIDLAB_TUNE=${3:-} timeout 120 .devrun/hybridlab "${A[@]}" --variant $2 --out /tmp/ar --tag ar-$1 > logs/ar-$1.log 2>&1
}
run cm vulkan:flash_coopmat
i=0
for t in "" ${ROWS_TUNES:-}; do
  run rows$i vulkan:flash_rows "$t"; echo "rows$i: $t" >> logs/ar-tunes.txt; i=$((i + 1))
done
run cm2 vulkan:flash_coopmat
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/ar/*/attention-ar-*.json')):
    d = json.load(open(f))
    for c in d['cases']:
        for r in c.get('results', []):
            if r.get('variant', '').startswith('vulkan:flash'):
                t = r['time_us']
                print(f.split('attention-')[1], c['label'], r['variant'], round(t['median'], 2), round(t['min'], 2),
                      round(t['max'], 2), r.get('rel_l2'), r['status'])
                for p in r.get('dispatches', []):
                    print('   ', json.dumps(p))
PY
cat logs/ar-tunes.txt
echo "experiments done at $(( $(date +%s) - T0 )) s"
tar czf $OUT/ar.tar.gz logs/ar-* /tmp/ar
if [ "${PAIRS:-2}" -gt 0 ]; then
  STEPS=synth LOGTAG=s DEADLINE=120 bash scripts/device_e2e.sh > /dev/null 2>&1  # the full-size file (kept if there)
  bench() {  # bench TAG TUNE
    HYBRIDLAB_TUNE=$2 PLAN='*=vulkan' STEPS=bench TAG=$1 LOGTAG=ar BENCH_N=4 RUNS=3 DEADLINE=120 bash scripts/device_e2e.sh > /dev/null 2>&1
    echo "$1: $(grep -h '^pp512 ' logs/bench-$1.log | head -1)"
    grep -h '^  attention ' logs/bench-$1.log | head -1
  }
  for i in $(seq ${PAIRS:-2}); do
    bench cm-$i attention.tiled.coopmat=1
    bench rows-$i attention.tiled.coopmat=2${BENCH_TUNE:+,$BENCH_TUNE}
  done
fi
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/ar.tar.gz logs/ar-* logs/bench-* /tmp/ar reports/*/bench-*.json
