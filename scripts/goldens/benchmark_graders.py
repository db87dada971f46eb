"""Goldens for the benchmark graders: tinker-cookbook's own Python graders run on crafted
(response, answer) cases; writes test/fixtures/benchmarks/<name>.goldens.json. Never run in CI.

Usage (see scripts/goldens/README.md for the environment):
    python scripts/goldens/benchmark_graders.py --cookbook-git <tinker-cookbook git dir> \
        --cookbook-commit <commit> --pylatexenc <folder holding the pylatexenc package>

Only the cookbook's grading functions are used: `_common.py` (extract_boxed, extract_number,
extract_gsm8k_answer, check_gsm8k, extract_mcq_answer) and `recipes/math_rl/math_grading.py`
(extract_boxed, grade_answer). They are loaded from the git objects; their unrelated imports
(`datasets`, the renderers' Message type) get empty stand-in modules. The lines that combine them per
benchmark follow the MessageEnv.step() of gsm8k.py, math500.py, aime.py and mmlu_redux.py.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import types


def load_cookbook(git_dir: str, commit: str) -> tuple[types.ModuleType, types.ModuleType]:
    def source(path: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout

    # stand-ins for imports the graders do not use
    datasets = types.ModuleType("datasets")
    datasets.Dataset = object  # type: ignore[attr-defined]
    sys.modules["datasets"] = datasets
    for name in ["tinker_cookbook", "tinker_cookbook.renderers", "tinker_cookbook.renderers.base"]:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["tinker_cookbook.renderers.base"].Message = dict  # type: ignore[attr-defined]

    def module(name: str, path: str) -> types.ModuleType:
        m = types.ModuleType(name)
        m.__file__ = path
        sys.modules[name] = m
        exec(compile(source(path), path, "exec"), m.__dict__)
        return m

    common = module("cookbook_common", "tinker_cookbook/eval/benchmarks/_common.py")
    math_grading = module("cookbook_math_grading", "tinker_cookbook/recipes/math_rl/math_grading.py")
    return common, math_grading


# ---------------------------------------------------------------------------------------------
# the grade of one response, per benchmark (as each benchmark's MessageEnv.step() combines them)


def grade_gsm8k(c, response: str, expected: str) -> dict:
    return {"correct": bool(c.check_gsm8k(response, expected)), "extracted": c.extract_gsm8k_answer(response)}


def grade_math500(mg, response: str, expected: str) -> dict:
    try:
        given = mg.extract_boxed(response)
        correct = mg.grade_answer(given, expected)
    except ValueError:
        given = ""
        correct = False
    return {"correct": bool(correct), "extracted": str(given)}


def grade_aime(c, response: str, expected: int) -> dict:
    boxed = c.extract_boxed(response)
    extracted_str = c.extract_number(boxed) if boxed else c.extract_gsm8k_answer(response)
    try:
        val = int(float(extracted_str))
        correct = val == expected
    except (ValueError, TypeError):
        val = None
        correct = False
    except OverflowError:
        # int(float("inf")): the cookbook's step() would raise here; recorded as not correct
        return {"correct": False, "extracted": extracted_str, "raises": "OverflowError"}
    return {"correct": bool(correct), "extracted": str(val) if val is not None else extracted_str}


def grade_mmlu(c, response: str, expected: str) -> dict:
    extracted = c.extract_mcq_answer(response)
    return {"correct": extracted == expected, "extracted": extracted}


# ---------------------------------------------------------------------------------------------
# crafted cases


def gsm8k_cases() -> list[tuple[str, str]]:
    expected = ["72", "1,234", "-5", "0.5", "18", "3.75", "100000", "0", "2125", "7"]
    templates = [
        "The answer is {x}.",
        "#### {x}",
        "So the total is \\boxed{{{x}}}.",
        "She pays **${x}** in total.",
        "**{x}**",
        "First 3 + 4 = 7. Then {x}.",
        "Answer: {x}",
        "The answer is: {x}",
        "answer is ${x}",
        "\\boxed{{\\${x}}}",
        "\\boxed{{{x} \\text{{ dollars}}}}",
        "\\boxed{{{x}}} and later \\boxed{{99}}",
        "We get 12 then 15, so {x} apples.",
        "#### {x} apples",
        "The answer is {x}.0",
        "{x}",
        "\\boxed{{ {x} }}",
        "It costs $ {x}.",
        "Total = {x}, not 3.",
        "**Final answer: {x}**",
    ]
    wrong = [
        "The answer is 13.", "#### 12", "\\boxed{12}", "No number here.", "", "\\boxed{}", "\\boxed{abc}", "\\boxed{72", "answer is -", "**-**",
        "7.2e1", "\\boxed{7.2e1}", "The answer is 1 234.", "72.000001", "\\boxed{\\frac{1}{2}}", "\\boxed{1/2}", "answer: 1.2.3", "#### ", "####",
        "the answer is 72 or 73", "**$1,234.00**", "**1,234**", "\\boxed{-0}", "\\boxed{+5}", "ANSWER IS 18", "answer:18", "\\boxed{\\text{18}}", "\\boxed{18\\%}",
        "answer is $3.75.", "\\boxed{3.750}", "result 100,000 total", "\\boxed{1e5}", "#### 1,234.", "**0.5**.", "\\boxed{.5}", "answer is .5", "#### -5.0",
    ]
    cases = []
    for x, t in itertools.product(expected, templates):
        cases.append((t.format(x=x), x))
    for w, x in itertools.product(wrong, ["72", "1,234", "18", "3.75", "0.5", "-5", "0", "100000"]):
        cases.append((w, x))
    # the expected answer as the dataset gives it ("... #### 72" → "72" is done by toProblem)
    return cases


def math_cases() -> list[tuple[str, str]]:
    groups: list[tuple[str, list[str]]] = [
        ("\\frac{1}{2}", ["1/2", "0.5", "\\dfrac{1}{2}", "\\frac12", "\\tfrac{1}{2}", "2/4", "\\frac{2}{4}", ".5", "0.50", "\\frac{1}{3}", "\\frac 12", "1 / 2"]),
        ("3\\sqrt{2}", ["3 \\sqrt 2", "\\sqrt{18}", "3\\sqrt2", "4.2426", "sqrt(18)", "3*sqrt(2)", "3\\sqrt{3}", "\\sqrt{2}\\cdot 3", "3 \\cdot \\sqrt{2}"]),
        ("(1,2)", ["(1, 2)", "\\left(1,2\\right)", "(2,1)", "[1,2]", "1,2", "(1,2,3)", "(1.0, 2.0)", "\\left( 1, 2 \\right)"]),
        ("10", ["10.0", "10\\%", "\\$10", "10 \\text{ cm}", "10^{\\circ}", "x=10", "ten", "\\text{10}", "10.000000001", "9.9999999999", "10 degrees", "10\\text{ inches}", "010", "1e1", "11"]),
        ("\\pi", ["pi", "3.14159", "\\frac{2\\pi}{2}", "\\pi/1", "2\\pi", "180^\\circ"]),
        ("x^2+2x+1", ["(x+1)^2", "x^2 + 2x + 1", "(x+1)^{2}", "x^2+2x", "1+2x+x^2", "x^{2}+2x+1", "(x + 1)(x + 1)"]),
        ("\\text{(C)}", ["C", "(C)", "\\text{C}", "c", "\\text{(c)}", "D"]),
        ("1,000", ["1000", "1{,}000", "1,000.0", "1000.5", "1 000", "10^3"]),
        ("-\\frac{3}{4}", ["-0.75", "\\frac{-3}{4}", "-3/4", "- \\frac34", "\\frac{3}{-4}", "-\\dfrac{3}{4}", "0.75"]),
        ("2\\frac{1}{3}", ["7/3", "2 1/3", "\\frac{7}{3}", "2\\frac13", "2.333"]),
        ("(-\\infty, 2) \\cup (3, \\infty)", ["(-\\infty,2)\\cup(3,\\infty)", "(-\\infty, 2) \\cup (3,\\infty)", "(-\\infty,2] \\cup (3,\\infty)", "x<2 \\text{ or } x>3"]),
        ("\\frac{5\\sqrt{3}}{2}", ["\\frac{5\\sqrt3}{2}", "5\\sqrt{3}/2", "2.5\\sqrt{3}", "\\frac{5}{2}\\sqrt{3}", "\\frac{\\sqrt{75}}{2}"]),
        ("y=2x+3", ["2x+3", "y = 2x + 3", "y=3+2x", "2x + 3", "y=2x-3"]),
        ("0", ["0.0", "-0", "zero", "\\text{0}", "0.00001"]),
        ("1.5", ["\\frac{3}{2}", "3/2", "1.50", "\\frac32", "1\\frac{1}{2}"]),
        ("\\sqrt{3}", ["3^{1/2}", "3^(1/2)", "1.732", "\\sqrt3", "\\frac{3}{\\sqrt{3}}", "\\sqrt{3}^1"]),
        ("1024", ["2^{10}", "2^10", "1024.0", "1,024", "1{,}024"]),
        ("6", ["6\\text{ inches}", "6 \\text{ feet}", "6\\text{ units}", "\\$6", "6.0", "six"]),
        ("\\$1.50", ["1.5", "\\$1.5", "1.50", "$1.50", "\\frac{3}{2}"]),
        ("\\frac{\\sqrt{2}}{2}", ["\\frac{1}{\\sqrt{2}}", "\\sqrt{2}/2", "\\frac{\\sqrt2}{2}", "0.7071", "\\frac12\\sqrt2"]),
        ("4\\pi", ["4 \\pi", "4pi", "\\pi \\cdot 4", "12.566", "4\\pi^2"]),
        ("\\{1,2,3\\}", ["1,2,3", "\\{1, 2, 3\\}", "\\{3,2,1\\}", "(1,2,3)"]),
        ("90^\\circ", ["90", "90^{\\circ}", "90 degrees", "\\frac{\\pi}{2}", "90\\text{ degrees}"]),
        ("\\frac{a}{b}", ["a/b", "\\frac{2a}{2b}", "ab^{-1}", "\\frac{b}{a}"]),
        ("12\\%", ["12", "12 \\%", "0.12", "12 percent"]),
        ("5,6", ["5, 6", "6,5", "5 \\text{ and } 6", "5 and 6", "(5,6)"]),
        ("k = 7", ["7", "k=7", "K = 7", "7.0"]),
        ("x \\in [2, 5]", ["[2,5]", "x\\in[2,5]", "[2, 5]"]),
        ("3 \\text{ million}", ["3000000", "3,000,000", "3 million", "3\\cdot 10^6"]),
        ("-2", ["-2.0", "- 2", "−2", "\\text{-}2", "2"]),
        ("\\dfrac{9}{4}", ["2.25", "9/4", "\\frac94", "\\frac{18}{8}", "2\\frac14"]),
        ("2\\sqrt{5}", ["\\sqrt{20}", "2 \\sqrt{5}", "4.472", "2\\sqrt5", "\\sqrt{5}2"]),
    ]
    wrappers = ["So the answer is $\\boxed{{{a}}}$.", "\\boxed{{{a}}}"]
    cases: list[tuple[str, str]] = []
    for truth, givens in groups:
        for i, g in enumerate([truth, *givens]):
            cases.append((wrappers[i % 2].format(a=g), truth))
    # answers crossed with another group's reference (mostly wrong, some by the normalisation)
    for (t1, _), (_, g2) in zip(groups, groups[1:] + groups[:1]):
        for g in g2[:3]:
            cases.append((f"\\boxed{{{g}}}", t1))
    # extraction
    extraction = [
        ("No boxed answer: 1/2", "\\frac{1}{2}"),
        ("\\boxed{3} then \\boxed{1/2}", "\\frac{1}{2}"),
        ("\\boxed{1/2} then \\boxed{3}", "\\frac{1}{2}"),
        ("\\boxed 5", "5"),
        ("\\boxed  x", "x"),
        ("a } b \\boxed{5}", "5"),
        ("\\boxed{\\frac{1}{2}", "\\frac{1}{2}"),
        ("\\boxed{\\boxed{7}}", "7"),
        ("\\fbox{7}", "7"),
        ("$\\boxed{\\text{(B)}}$", "\\text{(B)}"),
        ("\\boxed{}", "0"),
        ("\\boxed{ }", "0"),
        ("The answer is \\boxed{\\left( \\frac{1}{2}, 3 \\right)}.", "\\left( \\frac{1}{2}, 3 \\right)"),
        ("\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
        ("\\boxed{x = 5}", "5"),
        ("\\boxed{\\textbf{(A)}}", "\\text{(A)}"),
        ("\\[\\boxed{42}\\]", "42"),
        ("<think>\\boxed{1}</think> \\boxed{2}", "2"),
    ]
    cases.extend(extraction)
    return cases


def aime_cases() -> list[tuple[str, int]]:
    expected = [0, 5, 42, 204, 999, 70, 588, 17, 113, 336]
    templates = [
        "\\boxed{{{x}}}",
        "\\boxed{{{x:03d}}}",
        "\\boxed{{{x}.0}}",
        "\\boxed{{ {x} }}",
        "\\boxed{{\\text{{{x}}}}}",
        "#### {x}",
        "The answer is {x}.",
        "answer: {x}",
        "\\boxed{{x={x}}}",
        "\\boxed{{{x}^\\circ}}",
        "\\boxed{{-{x}}}",
        "\\boxed{{{x}}} or maybe \\boxed{{5}}",
        "We find m+n = {x}.",
        "**{x}**",
        "\\boxed{{{x}.9}}",
        "\\boxed{{\\mathbf{{{x}}}}}",
        "Thus \\(\\boxed{{{x}}}\\).",
        "\\boxed{{{x},000}}",
        "\\boxed{{{x}}}\n\nWait, 12 more.",
        "so {x} mod 1000 is the remainder",
        "\\boxed{{\\dfrac{{{x}}}{{1}}}}",
        "The final answer is $\\boxed{{{x}}}$.",
        "\\boxed{{{x}",
        "\\boxed{{}} {x}",
        "\\boxed{{ {x} \\text{{ ways}} }}",
        "answer is {x}0",
        "{x} + 1 = {y}",
        "\\boxed{{{x}e0}}",
        "\\boxed{{0{x}}}",
        "#### {x}.5",
    ]
    cases = []
    for x, t in itertools.product(expected, templates):
        cases.append((t.format(x=x, y=x + 1), x))
    for w in ["", "no idea", "\\boxed{}", "\\boxed{abc}", "\\boxed{inf}", "answer is -", "\\boxed{1e400}", "\\boxed{nan}", "\\boxed{\\infty}", "The answer is 1e3"]:
        for x in [0, 999, 42]:
            cases.append((w, x))
    return cases


def mmlu_cases() -> list[tuple[str, str]]:
    templates = [
        "The answer is ({x}).",
        "The answer is {x}",
        "\\boxed{{{x}}}",
        "\\boxed{{{xl}}}",
        "\\boxed{{ {x} }}",
        "\\boxed{{({x})}}",
        "Answer: {x}",
        "answer: ({x})",
        "ANSWER IS {xl}",
        "I think {x} is right.",
        "{x}",
        "({x})",
        "{x}.",
        "**{x}**",
        "The correct option is {x}) since...",
        "{x}: because it fits.",
        "Looking at A and B, the best is {x}",
        "Not A. So {x}.",
        "{xl}",
        "The answer is {xl}.",
        "I would say (E) or {x}",
        "A long explanation. " * 20 + "{x}",
        "{x} " + "filler words here, " * 20,
        "\\boxed{{{x}}} but actually A",
        "answer is not clear; {x}",
        "answer:{x}",
        "Answer: **{x}**",
        "Option {x}",
        "{x}) The option text",
        "The answer is: ({x}) the choice text",
        "The answer is option {x}",
        "\\boxed{{\\text{{{x}}}}}",
        "Final: {x}{x}",
        "I choose {x}, not E.",
        "{x} and D",
        "so it is {x}-ish",
        "{x}_1",
        "the letter {x}\n",
        "Answer: {x}\nExplanation: C is wrong.",
        "\\boxed{{E}} {x}",
    ]
    cases = []
    # each response against two references: the letter it gives, and another
    for y, t in itertools.product("ABCD", templates):
        r = t.format(x=y, xl=y.lower())
        cases.append((r, y))
        cases.append((r, "ABCD"[("ABCD".index(y) + 2) % 4]))
    for w in ["", "None of them.", "I", "Apple", "\\boxed{E}", "answer: (E)", "The answer is E", "a", "It is true.", "CAB", "A/B"]:
        for x in "ABCD":
            cases.append((w, x))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cookbook-git", required=True)
    ap.add_argument("--cookbook-commit", required=True)
    ap.add_argument("--pylatexenc", required=True, help="folder holding the pylatexenc package (2.11)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "test", "fixtures", "benchmarks"))
    a = ap.parse_args()
    sys.path.insert(0, a.pylatexenc)
    import pylatexenc.version  # noqa: E402
    import sympy  # noqa: E402

    common, math_grading = load_cookbook(a.cookbook_git, a.cookbook_commit)
    made_by = {
        "script": "scripts/goldens/benchmark_graders.py",
        "tinker_cookbook": a.cookbook_commit,
        "python": sys.version.split()[0],
        "sympy": sympy.__version__,
        "pylatexenc": pylatexenc.version.version_str,
    }
    suites = {
        "gsm8k": [(r, x, grade_gsm8k(common, r, x)) for r, x in gsm8k_cases()],
        "math500": [(r, x, grade_math500(math_grading, r, x)) for r, x in math_cases()],
        "aime_2025": [(r, x, grade_aime(common, r, x)) for r, x in aime_cases()],
        "mmlu_redux": [(r, x, grade_mmlu(common, r, x)) for r, x in mmlu_cases()],
    }
    os.makedirs(a.out, exist_ok=True)
    for name, rows in suites.items():
        cases = [{"response": r, "answer": x, **g} for r, x, g in rows]
        path = os.path.join(a.out, f"{name}.goldens.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"benchmark": name, "made_by": made_by, "cases": cases}, f, ensure_ascii=False, indent=0)
            f.write("\n")
        print(f"{name}: {len(cases)} cases, {sum(c['correct'] for c in cases)} correct → {path}")


if __name__ == "__main__":
    main()
