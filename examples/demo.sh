#!/usr/bin/env bash
# The assertly demo. Part 1 judges the bundled example responses with `assertly check`; part 2
# runs the example agent tests and workflow eval with `assertly run` from examples/, writes
# reports to examples/reports/, re-renders the stored run with `assertly report`, validates
# the files with `assertly validate`, compares two runs (`--baseline`, `diff`) and two versions
# of the example agent in one run (`--target v1=… --target v2=…`), and runs conversation tests:
# scripted users, and a simulated user replayed offline from its recorded replies.
# Run it with `make demo` (which puts .venv/bin on PATH first), or from the repository root:
#   PATH=.venv/bin:$PATH bash examples/demo.sh
# Some steps are meant to fail (exit code 1) or to be refused (exit code 2). Any other
# unexpected exit code stops the demo with a non-zero status, so `make demo` fails when
# something is really wrong.
set -u

cd "$(dirname "$0")/.." || exit 2

if ! command -v assertly >/dev/null 2>&1; then
    echo "demo: 'assertly' is not on PATH; run 'make demo' from the repository root" >&2
    exit 2
fi

heading() {
    printf '\n== %s\n' "$1"
}

# demo EXPECTED_EXIT_CODE ARGS...: run `assertly ARGS...`, show the command, and stop the demo
# unless it exits with the expected code.
demo() {
    local expected=$1
    shift
    local shown="" arg
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=-]+$ ]]; then shown+=" $arg"; else shown+=" '$arg'"; fi
    done
    printf '$ assertly%s\n' "$shown"
    assertly "$@" 2>&1 # one stream, so messages stay in order in logs
    local code=$?
    if [ "$code" -ne "$expected" ]; then
        echo "demo: 'assertly$shown' exited with $code, expected $expected" >&2
        exit 1
    fi
    if [ "$code" -ne 0 ]; then
        echo "(exit code $code, as expected)"
    fi
}

check() {
    demo "$1" check "${@:2}"
}

# file_replies FILE: file recorded model replies (JSON Lines of key, model, reply) into the
# run store's judge cache, where `--judge-cache replay` reads them.
file_replies() {
    printf '$ python3 -c ... %s   # file the recorded replies in the run store\n' "$1"
    python3 - "$1" <<'PY' || exit 1
import json
import sys

from assertly.store import RunStore

store = RunStore("reports/runs.sqlite")
with open(sys.argv[1], encoding="utf-8") as handle:
    for line in handle:
        entry = json.loads(line)
        store.save_judge_reply(entry["key"], entry["reply"], entry["model"], 0, 0.0, "recorded")
store.close()
PY
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

heading "7. Tool calls in a recorded Anthropic conversation: the refund policy check was skipped (fails)"
check 1 --expect examples/tool_sequence_failing.yaml \
    --response examples/tools/anthropic_refund_skipped_policy.json

# Part 2: `assertly run`. assertly.yaml (the project config: agents, hooks, facts, run store)
# is read from the current directory, so run from examples/ (its relative paths are relative to
# examples/ wherever assertly runs; elsewhere, pass --config examples/assertly.yaml).
printf '\n$ cd examples\n'
cd examples || exit 2
rm -rf reports # a fresh run store and fresh reports on every demo run

heading "8. Run one suite of agent tests against the example agent (passes)"
demo 0 run notes.tests.yaml --suite errors --plain

heading "9. Run every test and the workflow eval, with reports (two tests fail on purpose)"
demo 1 run notes.tests.yaml summarizer.workflow.yaml --now 2026-01-20T00:00:00Z --plain \
    -o reports/report.json -o reports/report.xml -o reports/report.md -o reports/report.html

heading "10. Every test is in the reports: a passing test's input, output and metrics (report.json)"
printf '$ python3 -c ... reports/report.json   # the test incident_logs_only\n'
python3 - <<'PY' || exit 1
import json

report = json.load(open("reports/report.json", encoding="utf-8"))
test = next(t for t in report["tests"] if t["id"] == "incident_logs_only")
trial = test["trials"][0]
output = trial["output"]
shown = {**output, "results": output["results"][:1] + ["..."]}  # the first result, for brevity
print(json.dumps({"status": test["status"], "input": test["input"]}))
print(json.dumps({"output": shown, "output_truncated": trial["output_truncated"]}, indent=2))
print(json.dumps({"metrics": trial["metrics"]}))
PY

heading "11. Re-render the stored run without re-running it (exit code from the stored verdicts)"
demo 1 report last -o reports/last.md
sed -n '1,12p' reports/last.md

heading "12. Load and compile the test files without running anything"
demo 0 validate notes.tests.yaml summarizer.workflow.yaml support.tests.yaml \
    conversations.tests.yaml

heading "13. Did my change make it worse? A new agent version, gated on the run of step 9"
demo 1 run notes.tests.yaml summarizer.workflow.yaml --now 2026-01-20T00:00:00Z --plain \
    --target 'cmd:python3 agent/notes_agent.py --without-history' --baseline last \
    -o reports/compare.html

heading "14. The two runs compared: regressions first, then the statistics"
demo 1 diff last~1 last

heading "15. The same comparison as a pull-request comment (Markdown)"
demo 1 diff last~1 last --format md -o reports/diff.md
cat reports/diff.md

heading "16. Two versions of the agent in one run: v1 (notes-mini-1) against v2 (gpt-4o)"
# Each test runs once per target (its key ends in [v1] or [v2]); v1, the first label, is the
# base. v2 fixes one test (it uses the model deliberately_failing_expects_gpt4o expects) and
# breaks one (security_search_basics pins the default model); the two failing on purpose on
# both keep the exit code 1. A SPEC may name an agent of assertly.yaml (notes, notes_v2).
demo 1 run notes.tests.yaml --now 2026-01-20T00:00:00Z --plain \
    --target v1=notes --target v2=notes_v2 -o reports/matrix.json
# The same comparison as two runs' (regressions, fixes, McNemar), inside the one run; exit
# 1: v2 regressed a test v1 passed.
demo 1 diff last:v1 last:v2

heading "17. Trajectory tests over recorded OpenAI and Anthropic tool-calling replies (passes)"
demo 0 run support.tests.yaml --plain
heading "18. Model-graded: an LLM judge (llm-rubric), offline from its recorded cache (one fails)"
# The judge's replies are in judge/judge-cache.jsonl (written by judge/write_cache.py); filed
# into the run store's judge cache, `--judge-cache replay` reads them and calls no model (a
# missing one would be an error, never a pass). Each dataset line brings its own vars and
# expected answer, read by {{ vars.NAME }} and {{ expected }} in the suite's assertions.
file_replies judge/judge-cache.jsonl
demo 1 run judge/support.tests.yaml --plain --judge-cache replay

heading "19. An llm-rubric needs a judge: validate checks the config has one"
demo 0 validate judge/support.tests.yaml

heading "20. A conversation with scripted users: each turn judged, then the whole (one fails at turn 2)"
# The agent (agent/refund_agent.py) is called once per turn with the whole history as OpenAI
# messages. A failed turn does not stop the conversation: question_before_refund fails at turn
# 2 (the agent refunds before answering) and at turn 3 (the refund was already issued).
demo 1 run conversations.tests.yaml --suite scripted --plain

heading "21. A simulated user, offline: its recorded replies replayed from the judge cache"
# A model plays the user (config simulator:); its replies were recorded once by
# judge/record_simulator.py into judge/simulator-cache.jsonl. Filed into the run store's judge
# cache, `--judge-cache replay` reads them and calls no model (a miss would be an error).
file_replies judge/simulator-cache.jsonl
demo 0 run conversations.tests.yaml --suite simulated --plain --judge-cache replay \
    -o reports/conversation.json
printf '$ python3 -c ... reports/conversation.json   # the transcript, turn by turn\n'
python3 - <<'PY' || exit 1
import json

trial = json.load(open("reports/conversation.json", encoding="utf-8"))["tests"][0]["trials"][0]
for turn in trial["turns"]:
    calls = ", ".join(call["name"] for call in turn["tool_calls"] or [])
    print(f"turn {turn['index']} user:  {turn['user']}")
    print(f"       agent: {turn['output']['choices'][0]['message']['content']}")
    print(f"       tools: {calls or '-'}   {turn['outcome']}")
print(f"conversation: {trial['conversation']['outcome']}, ended by {trial['conversation']['ended']}")
PY

heading "22. Browse the runs: the viewer's pages and JSON as static files (assertly view --export)"
demo 0 view --export reports/view
ls reports/view
printf '(serve them: python3 -m http.server -d examples/reports/view, or run `assertly view` for the live viewer)\n'

heading "23. Semantic similarity (similar), offline with a local model"
if python3 -c 'from assertly.engine.graded._embeddings import missing_extra; raise SystemExit(bool(missing_extra()))' 2>/dev/null; then
    # A paraphrase passes; a reply about something else fails (exit code 1).
    echo 'Your refund arrives within five business days.' >reports/refund_reply.txt
    echo 'Our store closes at nine tonight.' >reports/other_reply.txt
    similar='[{"type": "similar", "value": "You will get your refund within 5 business days."}]'
    check 0 --expect "$similar" --response reports/refund_reply.txt
    check 1 --expect "$similar" --response reports/other_reply.txt
else
    echo "skipped: similar needs its local model; install it with: pip install 'assertly[similar]'"
fi

heading "24. Traces: an agent instrumented with OpenTelemetry, judged by its spans"
# agent/traced_agent.py exports OTLP spans to the run's receiver and names no tool in its reply;
# its tool calls, model, tokens and cost come from its spans. One test fails: its spans show the
# refund was issued without the policy check (exit code 1).
demo 1 run traces.tests.yaml --plain -o reports/traces.json
printf '$ python3 -c ... reports/traces.json   # what each trial\x27s trace held\n'
python3 - <<'PY' || exit 1
import json

for test in json.load(open("reports/traces.json", encoding="utf-8"))["tests"]:
    trace = test["trials"][0]["trace"]
    print(f"{test['id']}: {test['status']}; {trace['spans']} spans, tools "
          f"{' -> '.join(trace['tools'])}, {trace['model_calls']} model call")
PY

heading "25. A recorded trace judged without the agent (assertly check --trace)"
# An OTLP JSON file as an exporter wrote it: the refund's tool span failed (exit code 1).
check 1 --expect '[{"type": "no-error-spans"}, {"type": "tool-called", "value": "issue_refund", "config": {"source": "trace"}}]' \
    --trace traces/refund_timeout.json

printf '\nDemo finished: every command exited with the expected code.\n'
printf 'Reports: examples/reports/report.{json,xml,md,html}, compare.html, diff.md, matrix.json,\n'
printf '         conversation.json, traces.json, view/index.html\n'
