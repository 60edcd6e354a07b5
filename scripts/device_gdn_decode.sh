#!/usr/bin/env bash
# gdn_decode's step split by its diag bits, and late_ticket 0 / 1 (chained 16 deep, then the decode stream: tg128).
# One device call (the `device` tool), carrying .devrun/ (hybridlab-main.xz, COMMIT), .gl/ and .peers/ as scripts/device_e2e.sh
# expects. Prints the chained times per setting and the tg128 lines; returns $OUT/c.tar.gz (logs and JSON reports).
# CONFIGS: the chained settings (space-separated HYBRIDLAB_TUNE specs without the op's prefix, ','-joined within one, e.g.
# 'blocks=4,diag=8'); BENCH=0 leaves the tg128 benches out.
set -u
T0=$(date +%s)
[ -x .devrun/hybridlab ] || { xz -dc .devrun/hybridlab-main.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab; }
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=true HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT)
mkdir -p logs /tmp/gd
G=(experiment ssm_scan --full --gpu-only --no-sweep --chain 16 --runs 20 --time-failing --cases '^gdn_decode T=1 ')
for cfg in ${CONFIGS:-late_ticket=0 late_ticket=1 diag=2 diag=1 diag=4 diag=8 late_ticket=0 late_ticket=1}; do
  n=${cfg//[=,]/}; [ -f /tmp/gd/done-$n ] && n=$n-2
  tune=gdn_decode.fused_decode.${cfg//,/,gdn_decode.fused_decode.}
  HYBRIDLAB_TUNE=$tune timeout 60 .devrun/hybridlab "${G[@]}" --out /tmp/gd --tag gd-$n > logs/gd-$n.log 2>&1
  touch /tmp/gd/done-${cfg//[=,]/}
done
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/gd/*/ssm_scan-gd-*.json')):
    d = json.load(open(f))
    for c in d['cases']:
        for r in c.get('results', []):
            if r.get('variant', '').startswith('vulkan'):
                t = r['time_us']; print(f.split('ssm_scan-')[1], r['variant'], round(t['median'], 2), round(t['min'], 2), round(t['max'], 2), r['status'])
PY
echo "chained done at $(( $(date +%s) - T0 )) s"
tar czf $OUT/c.tar.gz logs/gd-* /tmp/gd
[ "${BENCH:-1}" = 0 ] && exit 0
STEPS=synth LOGTAG=s DEADLINE=90 bash scripts/device_e2e.sh > /dev/null 2>&1  # the full-size file (kept if there)
for i in 1 2; do
  for lt in 0 1; do
    HYBRIDLAB_TUNE=gdn_decode.fused_decode.late_ticket=$lt STEPS=bench TAG=lt$lt-$i LOGTAG=lt RUNS=3 DEADLINE=100 bash scripts/device_e2e.sh > /dev/null 2>&1
    grep -h "^tg128 \|gdn_decode " logs/bench-lt$lt-$i.log | head -3
  done
done
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/c.tar.gz logs/gd-* logs/bench-lt* /tmp/gd reports/*/bench-lt*.json
