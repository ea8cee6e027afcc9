#!/usr/bin/env bash
# The assertly demo: judge the bundled example responses with `assertly check`.
# Run it with `make demo` (which puts .venv/bin on PATH first), or from the repository root:
#   PATH=.venv/bin:$PATH bash examples/demo.sh
# One check is meant to fail (exit code 1). Any other unexpected exit code stops the demo
# with a non-zero status, so `make demo` fails when something is really wrong.
set -u

cd "$(dirname "$0")/.." || exit 2

if ! command -v assertly >/dev/null 2>&1; then
    echo "demo: 'assertly' is not on PATH; run 'make demo' from the repository root" >&2
    exit 2
fi

heading() {
    printf '\n== %s\n' "$1"
}

# check EXPECTED_EXIT_CODE ARGS...: run `assertly check ARGS...`, show the command, and stop
# the demo unless it exits with the expected code.
check() {
    local expected=$1
    shift
    local shown="" arg
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=-]+$ ]]; then shown+=" $arg"; else shown+=" '$arg'"; fi
    done
    printf '$ assertly check%s\n' "$shown"
    assertly check "$@" 2>&1 # one stream, so messages stay in order in logs
    local code=$?
    if [ "$code" -ne "$expected" ]; then
        echo "demo: 'assertly check$shown' exited with $code, expected $expected" >&2
        exit 1
    fi
    if [ "$code" -ne 0 ]; then
        echo "(exit code $code, as expected)"
    fi
}

heading "1. An agent's JSON search response against an expect dict (passes)"
check 0 --expect examples/search_expect.yaml --response examples/search_response.json

heading "2. The seed's worked example: one result outside journal/ (fails, exit code 1)"
check 1 --expect examples/search_expect_failing.yaml --response examples/search_response_mixed.json

heading "3. Prose LLM output with a fenced JSON block against typed assertions (passes)"
check 0 --expect examples/summary_assertions.yaml --response examples/summary_output.txt

heading "4. Typed assertions with json_path: transforms on the JSON response (passes)"
check 0 --expect examples/search_assertions.yaml --response examples/search_response.json

heading "5. The failing check again, as JSON for tools and CI (--format json)"
check 1 --expect examples/search_expect_failing.yaml --response examples/search_response_mixed.json \
    --format json

heading "6. A misspelt assertion is a configuration error (exit code 2, nothing judged)"
check 2 --expect '{"status": "success", "results_mn": 1}' --response examples/search_response.json

printf '\nDemo finished: every check exited with the expected code.\n'
