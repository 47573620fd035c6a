"""The bundled lessons (resources/lessons) and interview questions (resources/interview)
against the compiler as it is: every pass a lesson or demonstration shows exists in its
model's pipeline and changes the IR there, and every op it points at is in the IR it shows,
so a lesson breaks here, loudly, when a pass is renamed or stops doing what the text says."""

from __future__ import annotations

import json
import os
import pathlib
import runpy

import pytest

import cuvil
from cuvil import _jit

RESOURCES = pathlib.Path(__file__).resolve().parents[2] / "resources"
LESSONS = RESOURCES / "lessons"
INTERVIEW = RESOURCES / "interview" / "questions.json"
STEP_KEYS = {"text", "open", "pass", "before", "find", "run", "page", "question"}
PAGES = {"compile", "profile", "lessons"}


def _lessons():
    return sorted(p for p in LESSONS.iterdir() if (p / "lesson.json").is_file())


def test_there_are_lessons_covering_the_compiler():
    assert len(_lessons()) >= 8


@pytest.fixture
def snapshots(monkeypatch):
    """Runs a lesson's model with per-pass snapshots; its compilation's snapshots."""
    monkeypatch.setenv("CUVIL_DISABLE_DISK_CACHE", "1")
    previous = _jit.snapshot_capture_enabled()
    _jit.set_snapshot_capture(True)

    def run(model: pathlib.Path):
        count = len(cuvil.compilations())
        cwd = os.getcwd()
        try:
            os.chdir(model.parent)
            runpy.run_path(str(model), run_name="__main__")
        finally:
            os.chdir(cwd)
        records = cuvil.compilations()[count:]
        assert records, f"{model} compiled nothing"
        return records[0].compiled.snapshots

    yield run
    _jit.set_snapshot_capture(previous)


def _check_step(where: str, step: dict, steps: list, names: list, ir: str) -> str:
    """Checks one step against the compilation's snapshots; the IR it leaves shown."""
    assert set(step) <= STEP_KEYS, f"{where}: unknown fields {set(step) - STEP_KEYS}"
    assert step["text"].strip(), f"{where}: no text"
    assert step.get("page", "compile") in PAGES, where
    if "pass" in step:
        assert step["pass"] in names, f"{where}: no pass {step['pass']} in {names}"
        index = names.index(step["pass"])
        ir = steps[index - 1]["ir"] if step.get("before") else steps[index]["ir"]
        assert steps[index]["changed"], f"{where}: {step['pass']} changes nothing here"
    if "find" in step:
        assert step["find"] in ir, f"{where}: no {step['find']} in the IR it shows"
    if "question" in step:
        question = step["question"]
        assert question["prompt"] and len(question["choices"]) >= 2, where
        assert 0 <= question["answer"] < len(question["choices"]), where
        assert question.get("explain"), f"{where}: the answer has no explanation"
    return ir


@pytest.mark.parametrize("folder", _lessons(), ids=lambda p: p.name)
def test_lesson_matches_the_compiler(folder, snapshots):
    lesson = json.loads((folder / "lesson.json").read_text())
    assert lesson["title"] and lesson["steps"]
    model = (folder / lesson["model"]).resolve()
    assert model.is_file(), f"{folder.name}: no model {model}"
    steps = snapshots(model)
    names = [s["name"] for s in steps]
    ir = steps[0]["ir"]  # what the explorer shows once the model has run
    for number, step in enumerate(lesson["steps"], start=1):
        ir = _check_step(f"{folder.name} step {number}", step, steps, names, ir)


def _questions():
    return json.loads(INTERVIEW.read_text())["questions"]


def test_interview_deck_covers_the_topics():
    topics = {q["topic"] for q in _questions()}
    assert len(_questions()) >= 8
    assert {"IR design", "Dynamic shapes", "Pass pipeline", "Fingerprints and serialization",
            "Runtime memory", "Latency attribution"} <= topics  # fmt: skip
    assert len({q["id"] for q in _questions()}) == len(_questions())


@pytest.mark.parametrize("question", _questions(), ids=lambda q: q["id"])
def test_interview_demonstration_matches_the_compiler(question, snapshots):
    assert question["question"].strip() and len(question["answer"]) > 200
    model = (INTERVIEW.parent / question["model"]).resolve()
    steps = snapshots(model)
    _check_step(question["id"], question["demo"], steps, [s["name"] for s in steps],
                steps[0]["ir"])  # fmt: skip
