#!/usr/bin/env bash
# attention_decode's step split by its diag bits (results wrong by design: experiment --time-failing), chained 16 deep at
# the full-size contexts 64, 512 and 4096, one device call (the `device` tool; carries .devrun/, .gl/, .peers/ as
# scripts/device_e2e.sh expects). Bits: 1 the query's norm and rope out, 2 the new key's, 4 the scoring, 8 the merge of
# the splits (ops/attention_decode/README.md). Prints each setting's times; returns $OUT/ad.tar.gz (logs, JSON reports).
set -u
T0=$(date +%s)
[ -x .devrun/hybridlab ] || { xz -dc .devrun/hybridlab-main.xz > .devrun/hybridlab && chmod +x .devrun/hybridlab; }
export HYBRIDLAB_ROOT=$PWD HYBRIDLAB_PYTHON=true HYBRIDLAB_COMMIT=$(cat .devrun/COMMIT)
mkdir -p logs /tmp/ad
A=(experiment attention --full --gpu-only --no-sweep --chain 16 --runs 20 --time-failing --variant vulkan:fused_decode
   --cases '^decode ctx=(64|512|4096)$')
for diag in 0 1 2 4 8 3 0; do
  n=diag$diag; [ -f /tmp/ad/done-$n ] && n=$n-2
  HYBRIDLAB_TUNE=attention_decode.fused_decode.diag=$diag timeout 90 .devrun/hybridlab "${A[@]}" --out /tmp/ad --tag ad-$n \
    > logs/ad-$n.log 2>&1
  touch /tmp/ad/done-diag$diag
done
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/ad/*/attention-ad-*.json')):
    d = json.load(open(f))
    for c in d['cases']:
        for r in c.get('results', []):
            if r.get('variant', '') == 'vulkan:fused_decode':
                t = r['time_us']; print(f.split('attention-')[1], c['label'], round(t['median'], 2), round(t['min'], 2), r['status'])
PY
echo "took $(( $(date +%s) - T0 )) s"
tar czf $OUT/ad.tar.gz logs/ad-* /tmp/ad
