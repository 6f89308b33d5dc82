#!/usr/bin/env bash
# Regenerate every figure of the project, or run the test suite.
#
#   ./run_all.sh                      set up .venv, get the data, run every notebook at the default profile (quick)
#   ./run_all.sh --tests              set up, lint (ruff check, rules in pyproject.toml: a finding stops here), get
#                                     the data, run the test suite (unit tests + every notebook at smoke)
#   ./run_all.sh --profile converged  models that converge on Fashion-MNIST (<= 150 min per paper on 2 cores);
#                                     resumes from the records committed in figures/converged/store/
#   ./run_all.sh --profile paper      the paper's settings (long)
#   ./run_all.sh --only hist          only the notebooks whose name or paper folder matches (glob or substring)
#   ./run_all.sh --verify --only hist rerun notebooks into a temporary folder and compare every committed metric
#                                     (figures/metrics) with the rerun, within stated tolerances; exit 1 if any is off
#   ./run_all.sh --lab                set up, then open JupyterLab on notebooks/ with the project's kernel (fedlib)
#   ./run_all.sh --site               set up, then build the results site (site/html/index.html) from the executed
#                                     notebooks (.executed/); never trains (python -m fedlib.lab.site)
#
# Setup: .venv with requirements.txt (exact pins), fedlib installed in editable mode (pip install -e .), the
# project's kernel "fedlib" registered into .venv, Fashion-MNIST prepared under data/.
# This is the regeneration command: figures of the quick profile go to figures/ (PNG + PDF) and
# figures/metrics/*.json, those of converged and paper to figures/<profile>/ (result store figures/<profile>/store/);
# smoke goes to .scratch/smoke/. A notebook run any other way (Jupyter, papermill) writes to .scratch/<profile>/.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD

PROFILE=quick
ONLY=""
ONLY_SET=0
TESTS=0
VERIFY=0
LAB=0
SITE=0
PROFILE_SET=0
usage() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; }   # the header comment
while [ $# -gt 0 ]; do
  case "$1" in
    --tests|--verify|--lab|--site)
      var=$(printf %s "${1#--}" | tr '[:lower:]' '[:upper:]')
      [ "${!var}" = 0 ] || { echo "run_all.sh: $1 given twice; give it once" >&2; exit 2; }
      printf -v "$var" 1 ;;
    --profile|--profile=*|--only|--only=*)
      opt=${1%%=*}
      if { [ "$opt" = --profile ] && [ "$PROFILE_SET" = 1 ]; } || { [ "$opt" = --only ] && [ "$ONLY_SET" = 1 ]; }; then
        echo "run_all.sh: $opt given twice; give it once (--only takes one glob or substring)" >&2; exit 2
      fi ;;&
    --profile) case "${2:-}" in ""|-*) echo "run_all.sh: --profile needs a value: smoke, quick, converged or paper (got '${2:-}')" >&2; exit 2 ;; esac
               PROFILE="$2"; PROFILE_SET=1; shift ;;
    --profile=*) PROFILE="${1#*=}"; PROFILE_SET=1 ;;
    --only) case "${2:-}" in -*) echo "run_all.sh: --only needs a pattern, got the option '$2'" >&2; exit 2 ;; esac
            [ $# -ge 2 ] || { echo "run_all.sh: --only needs a pattern" >&2; exit 2; }; ONLY="$2"; ONLY_SET=1; shift ;;
    --only=*) ONLY="${1#*=}"; ONLY_SET=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_all.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
case "$PROFILE" in smoke|quick|converged|paper) ;; *) echo "run_all.sh: --profile must be smoke, quick, converged or paper (got '$PROFILE')" >&2; exit 2 ;; esac
if [ $((TESTS + VERIFY + LAB + SITE)) -gt 1 ]; then
  echo "run_all.sh: --tests, --verify, --lab and --site exclude each other" >&2; exit 2
fi
if { [ "$TESTS" = 1 ] || [ "$LAB" = 1 ] || [ "$SITE" = 1 ]; } && { [ "$ONLY_SET" = 1 ] || [ "$PROFILE_SET" = 1 ]; }; then
  echo "run_all.sh: --only and --profile select notebooks to run; --tests, --lab and --site take neither" >&2; exit 2
fi

# --only is checked before any setup: an empty pattern or one that matches no notebook fails at once.
if [ "$ONLY_SET" = 1 ]; then
  if [ -z "${ONLY//[[:space:]]/}" ]; then
    echo "run_all.sh: --only needs a non-empty pattern (a notebook or paper name, glob or substring)" >&2; exit 2
  fi
  matched=0
  for nb in notebooks/*/*.ipynb; do
    stem=$(basename "$nb" .ipynb); paper=$(basename "$(dirname "$nb")")
    for s in "$stem" "$paper"; do
      # shellcheck disable=SC2254
      case "$s" in $ONLY|*"$ONLY"*) matched=1 ;; esac
    done
  done
  if [ "$matched" = 0 ]; then
    echo "run_all.sh: --only '$ONLY' matches no notebook; notebooks:" $(ls notebooks/*/*.ipynb | xargs -n1 basename | sed 's/.ipynb//') >&2
    exit 2
  fi
fi

heartbeat() {
  # heartbeat WHAT CMD...: run CMD; while it runs, print a line a minute (long set-up steps print nothing else)
  local what=$1; shift
  ( trap 'kill "$sp" 2>/dev/null; exit 0' TERM
    n=0; while :; do sleep 60 & sp=$!; wait "$sp"; n=$((n + 1)); echo "   ... $what: $n min so far"; done ) &
  local ticker=$! rc=0
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$rc"
}
quiet() { "$@" >/dev/null 2>&1; }   # quiet CMD...: CMD without its output (inside heartbeat, whose lines still show)

setup_venv() {
  local py=${PYTHON:-python3}
  if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv"
    "$py" -m venv .venv
  fi
  local want have
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  have=$(cat .venv/.requirements.sha256 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    echo "== installing requirements.txt into .venv (first time: a few minutes)"
    heartbeat "installing requirements.txt" .venv/bin/python -m pip install --disable-pip-version-check -q -r requirements.txt
    echo "$want" > .venv/.requirements.sha256
  fi
  # fedlib itself, editable: importable from any folder (a kernel started in a notebook's folder included)
  # (checked from /, in isolated mode: the current folder and PYTHONPATH would hide a missing install)
  if ! (cd / && "$ROOT/.venv/bin/python" -I -c "import fedlib, pathlib, sys; sys.exit(pathlib.Path(fedlib.__file__).resolve().parents[1] != pathlib.Path('$ROOT').resolve())" 2>/dev/null); then
    echo "== installing fedlib (editable) into .venv"
    heartbeat "installing fedlib" .venv/bin/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
  fi
  # the project's kernel (named in every notebook's metadata), JupyterLab's autosave off, fedlib the default kernel
  # (again when the kernel predates the thread pin: its kernel.json lacks OMP_NUM_THREADS; and when it starts another
  # folder's Python: a .venv copied or moved from another checkout would run that checkout's fedlib)
  if [ ! -f .venv/etc/jupyter/jupyter_server_config.d/fedlib.json ] ||
     ! grep -q OMP_NUM_THREADS .venv/share/jupyter/kernels/fedlib/kernel.json 2>/dev/null ||
     ! grep -qF "\"$ROOT/.venv/bin/python\"" .venv/share/jupyter/kernels/fedlib/kernel.json; then
    echo "== registering the Jupyter kernel \"Python (fedlib)\" (autosave off)"
    .venv/bin/python -m fedlib.lab.jupyter_setup >/dev/null
  fi
}

get_data() {
  # 1. already extracted under data/, or Debian's dataset-fashion-mnist present: fedlib.data prepares it.
  if .venv/bin/python -m fedlib.lab.data fashion-mnist >/dev/null 2>&1; then return 0; fi
  # 2. Debian package, when apt-get is usable.
  if command -v apt-get >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo -n"
    echo "== installing Debian's dataset-fashion-mnist"
    if heartbeat "installing dataset-fashion-mnist" quiet $sudo apt-get install -y -q dataset-fashion-mnist ||
       { heartbeat "apt-get update" quiet $sudo apt-get update -q &&
         heartbeat "installing dataset-fashion-mnist" quiet $sudo apt-get install -y -q dataset-fashion-mnist; }; then
      .venv/bin/python -m fedlib.lab.data fashion-mnist && return 0
    fi
  fi
  # 3. torchvision's download (machines with internet).
  echo "== downloading Fashion-MNIST with torchvision"
  if heartbeat "downloading Fashion-MNIST" .venv/bin/python -m fedlib.lab.data fashion-mnist --download; then return 0; fi
  echo "run_all.sh: Fashion-MNIST is not available. Install it with 'apt-get install -y dataset-fashion-mnist'" \
       "or run on a machine with internet access (torchvision downloads it into data/)." >&2
  exit 1
}

lint() {
  # ruff (pinned in requirements.txt) with the bug rules of pyproject.toml ([tool.ruff]: which files, which rules)
  echo "== lint: ruff check (rules in pyproject.toml)"
  if ! .venv/bin/python -m ruff check --output-format concise; then
    echo "run_all.sh: lint failed: fix the ruff findings above ('.venv/bin/ruff check --fix' fixes those marked [*])," \
         "or silence a false positive with '# noqa: RULE' and the reason; the tests did not run" >&2
    exit 1
  fi
}

setup_venv
# every FEDLIB_* variable checked before any other work (the convention: fedlib/lab/cli.py)
.venv/bin/python -c 'import sys; from fedlib.lab.cli import check_environment
try: check_environment()
except ValueError as exc: print(f"run_all.sh: {exc}", file=sys.stderr); sys.exit(2)'
if [ "$TESTS" = 1 ]; then lint; fi   # before the data and the tests: a lint finding fails at once
if [ "$TESTS" = 0 ] && [ "$LAB" = 0 ] && [ "$SITE" = 0 ]; then
  # the profile files of the selected notebooks: a parameter a notebook does not declare stops here, naming the
  # file, the notebook, the parameter and the declared ones (fedlib.lab.notebooks.check_profiles)
  cargs=(--check --profile "$PROFILE")
  [ "$ONLY_SET" = 1 ] && cargs+=(--only "$ONLY")
  .venv/bin/python -m fedlib.lab.notebooks "${cargs[@]}" || exit 2
fi
get_data

if [ "$LAB" = 1 ]; then
  echo "== JupyterLab on notebooks/ (kernel: Python (fedlib)); Ctrl-C to stop"
  lab_args=(--notebook-dir="$ROOT/notebooks")
  [ "$(id -u)" = 0 ] && lab_args+=(--allow-root)   # Jupyter refuses root without it (containers)
  exec .venv/bin/jupyter lab "${lab_args[@]}"
fi

if [ "$TESTS" = 1 ]; then
  echo "== test suite (unit tests + every notebook at the smoke profile)"
  # -n 2 --dist loadfile: two worker processes (pytest-xdist), each running whole test files, so a file's
  # module-scoped fixture (the smoke run of every notebook) runs once; --durations: the slowest tests, printed at the
  # end (the suite must stay under 30 minutes on 2 idle cores)
  exec .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=40 tests
fi

if [ "$SITE" = 1 ]; then
  echo "== results site from the executed notebooks (converged where committed, else quick; cache hits only)"
  exec .venv/bin/python -m fedlib.lab.site
fi

if [ "$VERIFY" = 1 ]; then
  echo "== verify: rerun notebooks at profile '$PROFILE'${ONLY:+ matching '$ONLY'} and compare with the committed metrics"
  vargs=(--profile "$PROFILE")
  [ "$ONLY_SET" = 1 ] && vargs+=(--only "$ONLY")
  exec .venv/bin/python -m fedlib.lab.verify "${vargs[@]}"
fi

echo "== notebooks at profile '$PROFILE'${ONLY:+ matching '$ONLY'}"
args=(--profile "$PROFILE")
[ "$ONLY_SET" = 1 ] && args+=(--only "$ONLY")
# the regeneration command: notebooks write the committed figures/ folders (smoke has none: .scratch/smoke/)
.venv/bin/python -m fedlib.lab.notebooks --commit "${args[@]}"
