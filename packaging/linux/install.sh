#!/bin/sh
# Add EdgeChat to the desktop's application menu (per user; nothing outside your home folder).
#   ./install.sh            from the unpacked EdgeChat folder (run it again after moving the folder)
#   ./install.sh --remove   take the menu entry and icon away (your documents and library stay)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
APPS=$DATA/applications
ICONS=$DATA/icons/hicolor/scalable/apps
if [ "${1:-}" = "--remove" ]; then
  rm -f "$APPS/edgechat.desktop" "$ICONS/edgechat.svg"
  echo "EdgeChat's menu entry removed."
  exit 0
fi
mkdir -p "$APPS" "$ICONS"
cp "$HERE/edgechat.svg" "$ICONS/edgechat.svg"
sed "s|^Exec=.*|Exec=\"$HERE/edgechat\"|" "$HERE/edgechat.desktop" > "$APPS/edgechat.desktop"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$APPS" || true
echo "EdgeChat added to the application menu (it starts $HERE/edgechat)."
