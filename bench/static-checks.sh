#!/bin/sh
# npm test's first step: the type check, the lint and the layer check at once. tsc and
# dependency-cruiser each keep one core busy (17 s and 10 s one after the other here), so on two
# cores they overlap. Each one's output is printed whole after it ends, so nothing interleaves;
# the step fails if any of the three does.
dir=$(mktemp -d)
npm run -s typecheck > "$dir/typecheck" 2>&1 & tc=$!
npm run -s check:layers > "$dir/layers" 2>&1 & ly=$!
npm run -s lint > "$dir/lint" 2>&1
status=$?
wait $tc || status=1
wait $ly || status=1
for step in typecheck lint layers; do
  if [ -s "$dir/$step" ]; then echo "== $step"; cat "$dir/$step"; fi
done
rm -rf "$dir"
exit $status
