"""The mutation results people read: ``ci/results/mutation/``.

From a cosmic-ray session database (and ``answers.txt``) writes

- ``mutants-PROFILE.json``: every mutant (a stable key, module, line,
  operator, outcome, the killing scenario, the diff): what ``mutate sample``
  (the CI ratchet) and ``score.json`` are computed from;
- ``score.json``: per profile, the counts and the score, also per module;
- ``report.md``: the scores, then every survivor with its diff and answer.

A survivor's answer (``answers.txt``, one line: ``KEY  ANSWER``) is exactly
one of ``killed since by scenario X``, ``equivalent because ...`` (checked
by a second reader) or ``open ...`` (the rest of the line says what should
kill it, e.g. the dimension that will: ``[live]``). A kill since by a
scenario counts in the profiles that hold that scenario: in the others
the survivor stays open (``answer_in``). Score = killed /
(killed + survived - equivalent); mutants the filters skipped (annotations,
operators left out: ``ci/mutation.toml``) and those still pending are
counted apart.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

ANSWER_KINDS = ("killed since by scenario ", "equivalent because ", "open")


def change_of(diff: str) -> str:
    """A mutant's diff without its line numbers (the ``@@`` headers): the
    same change at the same code, wherever the lines moved to."""
    return "\n".join(line for line in diff.splitlines() if not line.startswith("@@"))


def mutant_key(module: str, row: int, col: int, operator: str, ordinal: int) -> str:
    return f"{module}:{row}:{col}:{operator}:{ordinal}"


def load_session(db: str) -> list[dict]:
    """Every mutant of the session, with a key that survives re-inits of
    unchanged code (position, operator, ordinal among same-position ones).
    A shallow survivor a ``--deep`` run has not judged yet is the shallow
    survivor its record says (``deepening``)."""
    from cosmic_ray.work_db import WorkDB, use_db

    from conformance.mutation import deepening

    with use_db(str(db), WorkDB.Mode.open) as work_db:
        rows = session_rows(work_db, deepening.load(Path(db)))
    for row in rows:
        del row["deepening"], row["job_id"]
    return rows


def session_rows(work_db, deepening: dict | None = None) -> list[dict]:
    """``load_session``'s rows of an open ``WorkDB``, each with its ``job_id``
    and whether it is a shallow survivor sent deeper (``deepening``: the
    session's records, ``conformance.mutation.deepening.load``; without
    them such a mutant is pending)."""
    from conformance.mutation.distributor import killer_of

    rows = []
    results = dict(work_db.results)
    deepening = deepening or {}
    for item in work_db.work_items:
        (m,) = item.mutations
        r = results.get(item.job_id)
        deeper = r is None and item.job_id in deepening
        if deeper:  # its first-pass result stands until the deeper one is in
            rec = deepening[item.job_id]
            outcome, output, diff = "survived", rec["output"] or "", rec["diff"] or ""
        elif r is None:
            outcome = "pending"
        elif r.worker_outcome.value == "skipped":
            outcome = "skipped"
        elif r.test_outcome is not None:
            outcome = r.test_outcome.value  # killed / survived / incompetent
        else:
            outcome = r.worker_outcome.value  # no-test / exception / abnormal
        if not deeper:
            output, diff = ((r.output or ""), (r.diff or "")) if r else ("", "")
        rows.append({"job_id": item.job_id, "module": str(m.module_path), "line": m.start_pos[0],
                     "col": m.start_pos[1], "end_line": m.end_pos[0], "operator": m.operator_name,
                     "occurrence": m.occurrence, "outcome": outcome,
                     "killer": killer_of(r.output) if r else None,
                     "output": output, "diff": diff, "deepening": deeper})
    rows.sort(key=lambda x: (x["module"], x["line"], x["col"], x["operator"], x["occurrence"]))
    seen: Counter = Counter()
    for row in rows:
        at = (row["module"], row["line"], row["col"], row["operator"])
        row["key"] = mutant_key(*at[:3], at[3], seen[at])
        seen[at] += 1
    return rows


def load_answers(path: Path) -> dict:
    answers = {}
    if path.exists():
        for n, raw in enumerate(path.read_text().splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, _, answer = line.partition("  ")
            answer = answer.strip()
            if not answer.startswith(ANSWER_KINDS):
                raise ValueError(f"{path}:{n}: an answer starts with one of {ANSWER_KINDS}: {raw!r}")
            answers[key.strip()] = answer
    return answers


def answer_killer(answer: str) -> str | None:
    """The scenario a ``killed since by scenario X: ...`` answer names."""
    if not answer.startswith(ANSWER_KINDS[0]):
        return None
    return answer[len(ANSWER_KINDS[0]):].split(":", 1)[0].split()[0]


def answer_in(answer: str, scenarios) -> str:
    """``answer`` as it counts in a profile of ``scenarios`` (None: any): a
    kill since by a scenario the profile lacks is open there, since that
    profile's run would not make it."""
    killer = answer_killer(answer)
    if killer is None or scenarios is None or killer in scenarios:
        return answer
    return f"open in this profile: {answer}"


def score(rows: list[dict], answers: dict) -> dict:
    """Counts and score overall and per module (``answers`` as they count
    in the profile: ``answer_in``)."""
    def count(subset):
        c = Counter(r["outcome"] for r in subset)
        survivors = [r for r in subset if r["outcome"] == "survived"]
        equivalent = sum(1 for r in survivors if answers.get(r["key"], "").startswith("equivalent"))
        killed_since = sum(1 for r in survivors if answers.get(r["key"], "").startswith("killed since"))
        killed = c["killed"] + c["incompetent"] + killed_since
        denominator = killed + c["survived"] - killed_since - equivalent
        return {"mutants": len(subset), "killed": killed, "survived": c["survived"] - killed_since - equivalent,
                "equivalent": equivalent, "skipped": c["skipped"], "pending": c["pending"],
                "no_test": c["no-test"],
                "score": round(killed / denominator, 4) if denominator else None}

    modules = defaultdict(list)
    for r in rows:
        modules[r["module"]].append(r)
    return {"all": count(rows), "modules": {m: count(rs) for m, rs in sorted(modules.items())}}


def write(results: Path, profiles: dict, answers_path: Path, notes: dict,
          scenarios: dict | None = None) -> dict:
    """``profiles``: {profile: rows}; ``scenarios``: {profile: its scenario
    ids} (missing: a kill since by any scenario counts). Writes the three
    files; returns the scores."""
    answers = load_answers(answers_path)
    scores, per_profile = {}, {}
    for profile, rows in profiles.items():
        (results / f"mutants-{profile}.json").write_text(
            "[\n" + ",\n".join(json.dumps(r, sort_keys=True) for r in rows) + "\n]\n")
        ids = (scenarios or {}).get(profile)
        per_profile[profile] = {k: answer_in(a, ids) for k, a in answers.items()}
        scores[profile] = {**score(rows, per_profile[profile]), **notes.get(profile, {})}
    (results / "score.json").write_text(json.dumps(scores, indent=1, sort_keys=True) + "\n")
    (results / "report.md").write_text(markdown(profiles, scores, per_profile))
    return scores


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def markdown(profiles: dict, scores: dict, answers: dict) -> str:
    """``answers``: {profile: {key: answer as it counts there}}."""
    out = ["# Mutation analysis of `impl/`: scores and survivors", "",
           "Generated by `python -m conformance mutate report` from the cosmic-ray sessions; "
           "how it was run and measured: [README.md](README.md).", "",
           "| profile | mutants | killed | survived (open) | equivalent | filtered | pending | score |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for profile, s in scores.items():
        a = s["all"]
        out.append(f"| {profile} | {a['mutants']} | {a['killed']} | {a['survived']} | {a['equivalent']} | "
                   f"{a['skipped']} | {a['pending']} | {_pct(a['score'])} |")
    for profile, s in scores.items():
        out += ["", f"## Per module ({profile})", "",
                "| module | mutants | killed | survived | equivalent | filtered | pending | score |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for module, m in s["modules"].items():
            out.append(f"| `{module}` | {m['mutants']} | {m['killed']} | {m['survived']} | {m['equivalent']} | "
                       f"{m['skipped']} | {m['pending']} | {_pct(m['score'])} |")
    for profile, rows in profiles.items():
        survivors = [r for r in rows if r["outcome"] == "survived"]
        answered = answers[profile]
        tally = Counter(_kind(answered.get(r["key"])) for r in survivors)
        out += ["", f"## Survivors ({profile}): {len(survivors)}", "",
                "Answers: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())), ""]
        for r in survivors:
            out += [f"### `{r['key']}`", "", f"- answer: {answered.get(r['key'], 'open (not answered yet)')}",
                    f"- run: {r['output'].splitlines()[0] if r['output'] else ''}", "", "```diff",
                    *[ln for ln in r["diff"].splitlines() if not ln.startswith(("---", "+++"))], "```", ""]
    return "\n".join(out) + "\n"


def _kind(answer: str | None) -> str:
    if not answer:
        return "unanswered"
    return next(k.strip().split(" ")[0] for k in ANSWER_KINDS if answer.startswith(k))


def floor_problems(scores: dict, floors: dict, readme: str) -> list[str]:
    """Why the committed results break their ratchet (``floor.json``), or
    nothing: a profile's score below its floor, or a floor marked lowered
    whose own entry is missing under the README's "## Score drops": the
    line ``floor PROFILE SCORE (lowered, DATE HH:MM UTC`` of the floor's
    ``since`` (an entry of an earlier lowering to the same score does not
    stand for this one)."""
    drops = readme.split("## Score drops", 1)[1] if "## Score drops" in readme else ""
    out = []
    for profile, floor in floors.items():
        got = scores.get(profile, {}).get("all", {}).get("score")
        if got is None or got < floor["score"]:
            out.append(f"{profile}: score {got} is below its floor {floor['score']}")
        if not floor.get("lowered"):
            continue
        when = re.match(r"(\d{4}-\d{2}-\d{2}),? (\d{2}:\d{2}) UTC", floor.get("since", ""))
        entry = when and f"floor {profile} {floor['score']} (lowered, {when[1]} {when[2]} UTC"
        if not entry or entry not in " ".join(drops.split()):
            out.append(f"{profile}: floor {floor['score']} is marked lowered (since "
                       f"{floor.get('since')!r}) and README's Score drops has no line "
                       f"'{entry or 'floor PROFILE SCORE (lowered, DATE HH:MM UTC'}...'")
    return out
