#!/usr/bin/env bash
# resources/icons/edgechat.icns from the SVG (macOS; needs rsvg-convert: brew install librsvg).
set -euo pipefail
cd "$(dirname "$0")/../.."
SET=$(mktemp -d)/edgechat.iconset
mkdir -p "$SET"
for s in 16 32 128 256 512; do
  rsvg-convert -w $s -h $s resources/icons/edgechat.svg -o "$SET/icon_${s}x${s}.png"
  rsvg-convert -w $((s * 2)) -h $((s * 2)) resources/icons/edgechat.svg -o "$SET/icon_${s}x${s}@2x.png"
done
iconutil -c icns "$SET" -o resources/icons/edgechat.icns
echo "resources/icons/edgechat.icns"
