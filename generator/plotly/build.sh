#!/usr/bin/env bash
# Builds generator/assets/plotly-scatter.min.js, the site's partial Plotly bundle, from entry.js: plotly.js's core
# (the scatter trace) less the components no chart uses. Needs node and npm; the packages come from the npm
# registry at the versions package.json pins, installed in a scratch folder so the checkout keeps no node_modules.
#   bash generator/plotly/build.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../assets/plotly-scatter.min.js"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cp "$here/package.json" "$here/entry.js" "$work/"
cd "$work"
npm install --no-audit --no-fund --ignore-scripts --no-package-lock --loglevel=error >/dev/null
version="$(node -p 'require("plotly.js/package.json").version')"
# As plotly.js's own esbuild-config.js, except: the map subplot's CSS (registry.js) is left out (no chart is a map).
npx esbuild entry.js --bundle --minify --format=iife --global-name=Plotly --target=es2016 \
  --define:global=window --define:define.amd=false --alias:stream=stream-browserify --loader:.css=empty \
  --banner:js="/* plotly.js v$version, scatter only (generator/plotly/build.sh). Copyright 2012-2026, Plotly, Inc. MIT licence. */" \
  --log-level=warning --outfile="$out"
echo "$out: $(wc -c <"$out") bytes"
