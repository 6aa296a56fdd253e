#!/usr/bin/env bash
# First screen in a real terminal: start `dsh-tui` in a detached 120x40 tmux pane and
# poll `tmux capture-pane` every 10 ms until MARKER is on screen, the way the peers'
# first screens (Toad, Posting, Harlequin, Elia: 690-1,160 ms) were measured. One
# warm-up run, then RUNS measured runs;
# prints each and the median. Not part of run.py (it needs tmux and a pty).
#
#   benchmarks/tmux_first_screen.sh [RUNS] [MARKER]
#
# The environment is isolated (HOME, XDG dirs, DSH_TUI_CONFIG in a temp dir, no API
# key), so the app starts as on a first run: the demo model, one "demo" agent.
set -euo pipefail

RUNS="${1:-5}"
MARKER="${2:-Transcript · demo}"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
APP="${DSH_TUI_BIN:-$ROOT/.venv/bin/dsh-tui}"
SCRATCH="$(mktemp -d)"
SOCKET="dsh-bench-$$"
trap 'tmux -L "$SOCKET" kill-server 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT

command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 2; }

ENV_ARGS=(env -u DEEPSEEK_API_KEY -u OPENAI_API_KEY -u PYTHONDONTWRITEBYTECODE
          HOME="$SCRATCH" XDG_CONFIG_HOME="$SCRATCH/config" XDG_DATA_HOME="$SCRATCH/data"
          XDG_CACHE_HOME="$SCRATCH/cache" DSH_TUI_CONFIG="$SCRATCH/config/dsh-tui/config.toml"
          TERM=xterm-256color LANG=C.UTF-8)

one_run() {
  local start now elapsed
  start=$(date +%s%N)
  tmux -L "$SOCKET" new-session -d -x 120 -y 40 -s bench "${ENV_ARGS[*]} $APP"
  while true; do
    if tmux -L "$SOCKET" capture-pane -p -t bench 2>/dev/null | grep -qF "$MARKER"; then
      now=$(date +%s%N)
      break
    fi
    now=$(date +%s%N)
    if (( (now - start) / 1000000 > 20000 )); then
      echo "marker \"$MARKER\" never appeared; last screen:" >&2
      tmux -L "$SOCKET" capture-pane -p -t bench >&2 || true
      exit 1
    fi
    sleep 0.01
  done
  elapsed=$(( (now - start) / 1000000 ))
  tmux -L "$SOCKET" kill-server 2>/dev/null || true
  sleep 0.2
  echo "$elapsed"
}

one_run >/dev/null  # warm-up: page cache and .pyc files
results=()
for _ in $(seq "$RUNS"); do
  ms=$(one_run)
  results+=("$ms")
  echo "first screen: ${ms} ms"
done
median=$(printf '%s\n' "${results[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}')
echo "median first screen in a real terminal (tmux 120x40, marker \"$MARKER\"): ${median} ms over ${RUNS} runs"
