#!/usr/bin/env python3
"""IFEval grader goldens: the cookbook's own verifier on crafted (response, instructions + kwargs) cases.

Runs tinker-cookbook's `tinker_cookbook/eval/benchmarks/_ifeval_verify.py` (verify_all_instructions)
and `parse_kwargs` from `_common.py`, read from a cookbook git directory at a pinned tag, and writes
test/fixtures/benchmarks/ifeval.goldens.json. Never run in CI: the unit test reads the committed file.

    python3 -m venv /work/venv-ifeval            # Python 3.11.7; the verifier needs only the stdlib
    /work/venv-ifeval/bin/python scripts/goldens/ifeval.py <cookbook git dir> [tag, default v0.5.5]

Only the two functions are loaded (parse_kwargs is taken out of _common.py by its syntax tree), so the
cookbook's heavier imports (datasets, torch, the renderers) are not needed. langdetect, which the
verifier imports for language:response_language, is an optional extra of the cookbook and is not in
the local wheel index: these goldens are the cookbook without it (that instruction passes whenever its
language kwarg is a string).

Each case: {name, response, instruction_id_list, kwargs (as a row gives them: dicts, JSON strings,
nulls), results: [[id, met], ...] in the verifier's dict order, fraction, strict}. `accuracy` is the
cookbook's aggregate over all cases: strict = share of cases with every instruction met, loose = mean
fraction.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent.parent / "test" / "fixtures" / "benchmarks" / "ifeval.goldens.json"
VERIFY = "tinker_cookbook/eval/benchmarks/_ifeval_verify.py"
COMMON = "tinker_cookbook/eval/benchmarks/_common.py"

# IFEval's kwargs struct on the hub: every instruction's dict has all of these, null where unused.
HUB_FIELDS = [
    "num_highlights", "relation", "num_words", "num_placeholders", "prompt_to_repeat", "num_bullets",
    "section_spliter", "num_sections", "capital_relation", "capital_frequency", "keywords",
    "num_paragraphs", "language", "let_relation", "letter", "let_frequency", "end_phrase",
    "forbidden_words", "keyword", "frequency", "num_sentences", "postscript_marker", "first_word",
    "nth_paragraph",
]


def hub(**kw):
    return {f: kw.get(f) for f in HUB_FIELDS}


def load(git_dir: str, tag: str):
    show = lambda p: subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{p}"], check=True, capture_output=True, text=True).stdout
    tmp = Path(tempfile.mkdtemp()) / "_ifeval_verify.py"
    tmp.write_text(show(VERIFY))
    spec = importlib.util.spec_from_file_location("_ifeval_verify", tmp)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tree = ast.parse(show(COMMON))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "parse_kwargs")
    ns: dict = {"json": json}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), COMMON, "exec"), ns)
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{tag}^{{commit}}"], check=True, capture_output=True, text=True).stdout.strip()
    return mod.verify_all_instructions, ns["parse_kwargs"], commit


def cases():
    out = []

    def add(name, response, ids, kwargs=None):
        if isinstance(ids, str):
            ids = [ids]
        if kwargs is None:
            kwargs = [{} for _ in ids]
        elif isinstance(kwargs, dict):
            kwargs = [kwargs]
        out.append({"name": name, "response": response, "instruction_id_list": ids, "kwargs": kwargs})

    long_para = "The quick brown fox jumps over the lazy dog."
    # --- keywords ---
    for i, (resp, kws) in enumerate([
        ("I love Paris and ROME.", ["paris", "Rome"]),
        ("I love Paris.", ["paris", "rome"]),
        ("", ["x"]),
        ("", []),
        ("anything", [""]),
        ("Ünïcode STRASSE", ["ünï", "strasse"]),
        ("İstanbul", ["i̇stanbul"]),
        ("ΟΔΟΣ", ["οδος"]),
        ("abc", "ab"),          # a string: its characters
        ("abc", "ax"),
        ("abc", None),          # null: not iterable
        ("abc", ["a", 3]),      # an int has no .lower()
        ("abc", {"a": 1, "b": 2}),  # a dict: its keys
    ]):
        add(f"existence-{i}", resp, "keywords:existence", {"keywords": kws})
    add("existence-hub", "Paris in spring", "keywords:existence", hub(keywords=["spring"]))
    add("existence-missing-key", "whatever", "keywords:existence", {})
    for i, (resp, words) in enumerate([
        ("Clean text here", ["bad", "worse"]),
        ("This is BAD", ["bad"]),
        ("badge", ["bad"]),
        ("", ["x"]),
        ("anything", [""]),
        ("abc", None),
        ("abc", ["zzz", 5]),
        ("abc", []),
    ]):
        add(f"forbidden-{i}", resp, "keywords:forbidden_words", {"forbidden_words": words})
    add("forbidden-hub", "a calm reply", "keywords:forbidden_words", hub(forbidden_words=["storm"]))
    for i, (resp, kw) in enumerate([
        ("the cat and the hat and THE bat", {"keyword": "the", "relation": "at least", "frequency": 3}),
        ("the cat and the hat", {"keyword": "the", "relation": "at least", "frequency": 3}),
        ("the cat and the hat", {"keyword": "the", "relation": "exactly", "frequency": 2}),
        ("the cat and the hat", {"keyword": "the", "relation": "at most", "frequency": 1}),
        ("there then these", {"keyword": "the", "relation": "exactly", "frequency": 3}),
        ("aaaa", {"keyword": "aa", "relation": "exactly", "frequency": 2}),
        ("abc", {"keyword": "", "relation": "exactly", "frequency": 4}),
        ("ab😀c", {"keyword": "", "relation": "exactly", "frequency": 5}),
        ("x", {"keyword": "x", "relation": "more than", "frequency": 99}),
        ("x", {"keyword": "x", "relation": "at least ", "frequency": 99}),
        ("x", {"keyword": "x", "relation": None, "frequency": 99}),
        ("x", {"keyword": "x", "relation": "at least", "frequency": None}),
        ("x", {"keyword": "x", "relation": "at least", "frequency": "1"}),
        ("x", {"keyword": None, "relation": "at least", "frequency": 1}),
        ("x x", {"keyword": "x", "relation": "at least", "frequency": True}),
        ("x x", {"keyword": "x", "relation": "exactly", "frequency": 2.0}),
        ("x x", {"keyword": "x", "relation": "at least", "frequency": 1.5}),
        ("x", {"keyword": "x", "relation": ["at least"], "frequency": 1}),
        ("", {"keyword": "x", "frequency": 0}),
        ("", {}),
    ]):
        add(f"frequency-{i}", resp, "keywords:frequency", kw)
    add("frequency-hub", "dog dog dog", "keywords:frequency", hub(keyword="dog", relation="at least", frequency=3))
    for i, (resp, kw) in enumerate([
        ("Zebras zigzag", {"letter": "z", "let_relation": "at least", "let_frequency": 3}),
        ("Zebras", {"letter": "z", "let_relation": "at least", "let_frequency": 2}),
        ("Zebras", {"letter": "Z", "let_relation": "exactly", "let_frequency": 1}),
        ("ßß", {"letter": "ß", "let_relation": "exactly", "let_frequency": 2}),
        ("aaa", {"letter": "a", "let_relation": "less than", "let_frequency": 1}),
        ("aaa", {"letter": "a", "let_relation": "at most", "let_frequency": 2}),
        ("aaa", {"letter": "a", "let_relation": None, "let_frequency": 2}),
        ("aaa", {"letter": None, "let_relation": "at most", "let_frequency": 2}),
        ("aaa", {"letter": "", "let_relation": "exactly", "let_frequency": 4}),
    ]):
        add(f"letter-frequency-{i}", resp, "keywords:letter_frequency", kw)
    add("letter-frequency-hub", "banana", "keywords:letter_frequency", hub(letter="a", let_relation="at least", let_frequency=3))
    for i, (resp, kw) in enumerate([
        ("say hello once", {"keyword": "hello"}),
        ("hello Hello", {"keyword": "hello"}),
        ("nothing", {"keyword": "hello"}),
        ("othello", {"keyword": "hello"}),
        ("", {"keyword": ""}),
        ("a", {"keyword": ""}),
        ("a", {"keyword": 1}),
    ]):
        add(f"word-once-{i}", resp, "keywords:word_once", kw)
    for i, (resp, kw) in enumerate([
        ("1 2 3 4", {"N": 4}),
        ("1 1 1 2", {"N": 3}),
        ("01 1 001", {"N": 3}),
        ("abc123 4x 5", {"N": 2}),
        ("1.5 and 2,000", {"N": 4}),
        ("١٢ and 12", {"N": 2}),
        ("-7 _8 9_", {"N": 1}),
        ("²³ 45", {"N": 2}),
        ("", {"N": 0}),
        ("1", {"N": None}),
        ("1", {}),
    ]):
        add(f"different-numbers-{i}", resp, "keywords:word_count_different_numbers", kw)
    for i, (resp, kw) in enumerate([
        ("Hello there, my friend.", {"start_word": "hello", "end_word": "friend"}),
        ("Hello there, my friend.", {"start_word": "Hello", "end_word": "FRIEND"}),
        ("Hello there", {"start_word": "", "end_word": "there"}),
        ("Hello there", {"start_word": "hi", "end_word": ""}),
        ("...", {"start_word": "", "end_word": ""}),
        ("", {"start_word": "", "end_word": ""}),
        ("snake_case rocks_", {"start_word": "snake_case", "end_word": "rocks_"}),
        ("don't stop", {"start_word": "don", "end_word": "stop"}),
        ("word", {"start_word": None, "end_word": "word"}),
    ]):
        add(f"start-end-{i}", resp, "keywords:start_end", kw)
    for i, (resp, kw) in enumerate([
        ("one two three", {"keyword": "two", "position": 2}),
        ("one two three", {"keyword": "two", "position": 3}),
        ("one two three", {"keyword": "three", "position": 3}),
        ("one two three", {"keyword": "one", "position": 0}),
        ("one two three", {"keyword": "one", "position": 4}),
        ("one two three", {"keyword": "one", "position": -1}),
        ("one two three", {"keyword": "one", "position": True}),
        ("one two three", {"keyword": "one", "position": 1.5}),
        ("one two three", {"keyword": "one", "position": "1"}),
        ("One, TWO!", {"keyword": "Two", "position": 2}),
    ]):
        add(f"position-{i}", resp, "keywords:keyword_specific_position", kw)
    for i, resp in enumerate(["Wow, a racecar!", "no such words here", "I a", "aa", "ÉtÉ", "😀x😀", "", "Noon is here", "x_x"]):
        add(f"palindrome-{i}", resp, "keywords:palindrome")
    for i, resp in enumerate(["the the end", "The THE end", "the, the end", "a b a b", "", "one", "x_x x_x", "ü Ü"]):
        add(f"no-adjacent-{i}", resp, "keywords:no_adjacent_consecutive")

    # --- punctuation ---
    for i, resp in enumerate(["no commas here", "one, two", "", "fullwidth，comma", "Wow!", "plain. text", "ellipsis…", "ok"]):
        add(f"no-comma-{i}", resp, "punctuation:no_comma")
        add(f"no-exclamation-{i}", resp, "punctuation:punctuation_exclamation")
        add(f"no-dot-{i}", resp, "punctuation:punctuation_dot")

    # --- length constraints ---
    for i, (resp, kw) in enumerate([
        ("one two three", {"relation": "at least", "num_words": 3}),
        ("one two three", {"relation": "at least", "num_words": 4}),
        ("one  two\tthree\nfour", {"relation": "exactly", "num_words": 4}),
        ("one\u00a0two\u3000three", {"relation": "exactly", "num_words": 3}),
        ("one\u200btwo", {"relation": "exactly", "num_words": 1}),
        ("one\x1ctwo\x85three", {"relation": "exactly", "num_words": 3}),
        ("one\ufefftwo", {"relation": "exactly", "num_words": 1}),
        ("", {"relation": "at most", "num_words": 0}),
        ("   ", {"relation": "exactly", "num_words": 0}),
        ("a b c", {"relation": "at most", "num_words": 2}),
        ("a b c", {"relation": None, "num_words": 2}),
        ("a b c", {"relation": "at most", "num_words": None}),
        ("a b c", {}),
    ]):
        add(f"number-words-{i}", resp, "length_constraints:number_words", kw)
    add("number-words-hub", "short answer", "length_constraints:number_words", hub(relation="at least", num_words=300))
    for i, (resp, kw) in enumerate([
        ("One. Two! Three?", {"relation": "exactly", "num_sentences": 3}),
        ("One.Two. Three", {"relation": "exactly", "num_sentences": 2}),
        ("Dr. Smith went home. He slept.", {"relation": "exactly", "num_sentences": 3}),
        ("No end punctuation", {"relation": "exactly", "num_sentences": 1}),
        ("", {"relation": "exactly", "num_sentences": 0}),
        ("   ", {"relation": "exactly", "num_sentences": 0}),
        ("Wait...   really?!\n\nYes.", {"relation": "exactly", "num_sentences": 3}),
        ("A.\u00a0B.\u2028C.", {"relation": "exactly", "num_sentences": 3}),
        ("A.\u200bB.", {"relation": "exactly", "num_sentences": 1}),
        ("A. B. C. D.", {"relation": "at most", "num_sentences": 3}),
        ("A. B.", {"relation": "less than", "num_sentences": 3}),
        ("A. B.", {"relation": "at least", "num_sentences": "2"}),
    ]):
        add(f"number-sentences-{i}", resp, "length_constraints:number_sentences", kw)
    add("number-sentences-hub", "One. Two.", "length_constraints:number_sentences", hub(relation="less than", num_sentences=5))
    for i, (resp, kw) in enumerate([
        ("p1\n\np2\n\np3", {"relation": "exactly", "num_paragraphs": 3}),
        ("p1\n\n\n\np2", {"relation": "exactly", "num_paragraphs": 2}),
        ("p1\n\n \n\np2", {"relation": "exactly", "num_paragraphs": 2}),
        ("p1\n\n\np2", {"relation": "exactly", "num_paragraphs": 2}),
        ("p1\r\n\r\np2", {"relation": "exactly", "num_paragraphs": 2}),
        ("p1\n* * *\np2", {"relation": "exactly", "num_paragraphs": 2}),
        ("", {"relation": "exactly", "num_paragraphs": 0}),
        ("p1\n\np2", {"num_paragraphs": 3}),
        ("p1\n\np2", {"relation": None, "num_paragraphs": 3}),
        ("p1\n\np2", {"relation": None, "num_paragraphs": None}),
    ]):
        add(f"number-paragraphs-{i}", resp, "length_constraints:number_paragraphs", kw)
    # the hub's rows give number_paragraphs no relation (null): any count passes
    add("number-paragraphs-hub-null-relation", "one paragraph only", "length_constraints:number_paragraphs", hub(num_paragraphs=4))
    for i, (resp, kw) in enumerate([
        ("Intro here.\n\nSecond starts here.", {"nth_paragraph": 2, "first_word": "second"}),
        ("Intro here.\n\nSecond starts here.", {"nth_paragraph": 2, "first_word": "intro"}),
        ("Intro here.\n\nSecond starts here.", {"nth_paragraph": 3, "first_word": "second"}),
        ("Intro here.\n\nSecond starts here.", {"nth_paragraph": 0, "first_word": "second"}),
        ("Intro here.\n\nSecond starts here.", {"nth_paragraph": -1, "first_word": "intro"}),
        ("Intro here.\n\nSecond starts here.", {"nth_paragraph": -5, "first_word": "intro"}),
        ("", {"nth_paragraph": 0, "first_word": "x"}),
        ("\"Quoted\" start\n\n...Dots first", {"nth_paragraph": 2, "first_word": "dots"}),
        ("A\n\n!!!", {"nth_paragraph": 2, "first_word": ""}),
        ("A\n\nB", {"nth_paragraph": "2", "first_word": "b"}),
        ("A\n\nB", {"nth_paragraph": None, "first_word": "b"}),
        ("A\n\nB", {"nth_paragraph": 2, "first_word": None}),
        ("A\n\nB", {"first_word": "a"}),
    ]):
        add(f"nth-paragraph-{i}", resp, "length_constraints:nth_paragraph_first_word", kw)
    add("nth-paragraph-hub", "First.\n\nSummary follows.", "length_constraints:nth_paragraph_first_word", hub(num_paragraphs=2, nth_paragraph=2, first_word="summary"))

    # --- detectable format ---
    for i, resp in enumerate(["<<My Title>>\nbody", "  # Heading\nbody", "No title", "", "title <<later>>", "\u3000<<t>>", "#"]):
        add(f"title-{i}", resp, "detectable_format:title")
    for i, (resp, n) in enumerate([
        ("* one\n* two\n* three", 3),
        ("* one\n* two", 3),
        ("- a\n- b", 2),
        ("• a\n• b", 2),
        ("  * indented\n\t- tab", 2),
        ("*no space\n-nospace", 1),
        ("text * not at start", 1),
        ("\n\n* after blanks", 1),
        ("*\n* x", 2),
        ("x\r* after CR", 1),
        ("x\u2028* after LS", 1),
        ("1. numbered\n2. list", 1),
        ("", 0),
        ("* a", None),
    ]):
        add(f"bullets-{i}", resp, "detectable_format:number_bullet_lists", {"num_bullets": n})
    add("bullets-default", "* only one", "detectable_format:number_bullet_lists", {})
    for i, (resp, n) in enumerate([
        ("*one* and *two*", 2),
        ("**bold** text", 1),
        ("*a**b*", 2),
        ("* spaced *", 1),
        ("*multi\nline*", 1),
        ("**", 1),
        ("no highlights", 1),
        ("*x*", "1"),
    ]):
        add(f"highlights-{i}", resp, "detectable_format:number_highlighted_sections", {"num_highlights": n})
    add("highlights-hub", "*a* *b* *c*", "detectable_format:number_highlighted_sections", hub(num_highlights=3))
    for i, (resp, kw) in enumerate([
        ("# One\ntext\n## Two\ntext", {"num_sections": 2}),
        ("SECTION 1\ntext\nSECTION 2", {"section_spliter": "SECTION", "num_sections": 2}),
        ("####### seven", {"num_sections": 1}),
        ("#NoSpace", {"num_sections": 1}),
        ("text # not start", {"num_sections": 1}),
        ("\n\n## late", {"num_sections": 1}),
        ("", {"num_sections": 0}),
        ("# a", {"num_sections": None}),
    ]):
        add(f"sections-{i}", resp, "detectable_format:multiple_sections", kw)
    add("sections-hub", "Section 1\nfoo\nSection 2\nbar", "detectable_format:multiple_sections", hub(section_spliter="Section", num_sections=2))
    deep = "[" * 2000 + "]" * 2000
    for i, resp in enumerate([
        '{"a": 1}',
        '  {"a": [1, 2, {"b": null}]}  \n',
        '```json\n{"a": 1}\n```',
        'Here it is: {"a": 1} done',
        'Here: {"a": {"b": 1}}',
        '[1, 2, 3]',
        '"just a string"',
        '42',
        '{"a": NaN}',
        '{"a": Infinity, "b": -Infinity}',
        "{'a': 1}",
        '{"a": 1,}',
        '',
        'not json at all',
        '{"a": "line\nbreak"}',
        '{"a": "tab\\tok"}',
        '\ufeff{"a": 1}',
        '{"a": 1} {"b": 2}',
        '{} trailing',
        '{"x": 01}',
        '{"x": 1.}',
        '{"x": -0.5e+3}',
        '{"\u00e9": "\\u00e9"}',
        '[' * 50 + ']' * 50,
        deep,
        'prefix {broken} then {"ok": true}',
    ]):
        add(f"json-{i}", resp, "detectable_format:json_format")
    for i, resp in enumerate(["My answer is yes.", ""]):
        add(f"constrained-{i}", resp, "detectable_format:constrained_response")
    for i, resp in enumerate(["<<wrapped>>", "<<only open", "only close>>", ">>reversed<<", ""]):
        add(f"bigram-{i}", resp, "detectable_format:bigram_wrapping")
    for i, resp in enumerate(["- a line", "text\n  - indented", "no hyphen", "a-b", "", "\u2014 em dash", "x\r\n-crlf"]):
        add(f"hyphens-{i}", resp, "detectable_format:sentence_hyphens")
    for i, resp in enumerate(["[x]", "[", "]", "][", ""]):
        add(f"brackets-{i}", resp, "detectable_format:square_brackets")

    # --- detectable content ---
    for i, resp in enumerate(["Bye.\nP.S. more", "P.S no dot", "PS: hi", "p.s. lower", "p.s lower no dot", "P. S. spaced", "PPS: x", ""]):
        add(f"postscript-{i}", resp, "detectable_content:postscript", {"postscript_marker": "P.S."})
    add("postscript-hub", "Thanks\nP.P.S. again", "detectable_content:postscript", hub(postscript_marker="P.P.S"))
    for i, (resp, n) in enumerate([
        ("[name] lives at [address]", 2),
        ("[name]", 2),
        ("[]", 1),
        ("[multi\nline]", 1),
        ("[a]\r[b]", 2),
        ("[a\rb]", 1),
        ("[[nested]]", 1),
        ("[a] [b] [c]", 3),
        ("[x]", None),
    ]):
        add(f"placeholders-{i}", resp, "detectable_content:number_placeholders", {"num_placeholders": n})
    add("placeholders-hub", "Dear [name],", "detectable_content:number_placeholders", hub(num_placeholders=1))

    # --- change case ---
    for i, resp in enumerate(["Every Word Capitalised Here", "Every word", "ALL CAPS TEXT", "123 Numbers Ok", "", "Élan Über", "Ǆungla", "(Paren) Word", "ʕ Letter"]):
        add(f"capital-{i}", resp, "change_case:english_capital")
    for i, resp in enumerate(["all lower here", "Not lower", "123 !!", "", "straße", "日本語", "ǅ", "ʰ modifier", "ʕ"]):
        add(f"lowercase-{i}", resp, "change_case:english_lowercase")
    for i, (resp, kw) in enumerate([
        ("THE QUICK Brown fox", {"capital_frequency": 3, "capital_relation": "at least"}),
        ("THE QUICK Brown fox", {"capital_frequency": 2, "capital_relation": "at most"}),
        ("A B C", {"capital_frequency": 3, "capital_relation": "exactly"}),
        ("Émile Ölaf", {"capital_frequency": 2, "capital_relation": "exactly"}),
        ("ǅemal", {"capital_frequency": 1, "capital_relation": "exactly"}),
        ("", {"capital_frequency": 0, "capital_relation": "exactly"}),
        ("A", {"capital_frequency": None, "capital_relation": "at least"}),
        ("A", {}),
    ]):
        add(f"capital-frequency-{i}", resp, "change_case:capital_word_frequency", kw)
    add("capital-frequency-hub", "NO WAY", "change_case:capital_word_frequency", hub(capital_frequency=2, capital_relation="less than"))

    # --- first / last word ---
    for iid in ("first_word:first_word_answer", "first_word:first_word_sent"):
        for i, (resp, w) in enumerate([("Yes, indeed.", "yes"), ("  \"Yes\" indeed", "yes"), ("No.", "yes"), ("", ""), ("Über alles", "über"), ("x", None)]):
            add(f"{iid}-{i}", resp, iid, {"first_word": w})
    for iid in ("last_word:last_word_answer", "last_word:last_word_sent"):
        for i, (resp, w) in enumerate([("That is all.", "all"), ("end!!!", "end"), ("all done", "all"), ("", ""), ("Ende über", "ÜBER"), ("x", 5)]):
            add(f"{iid}-{i}", resp, iid, {"last_word": w})

    # --- startend ---
    for i, (resp, kw) in enumerate([
        ("Thanks. Is there anything else I can help with?", {"end_phrase": "Is there anything else I can help with?"}),
        ("Thanks. is there ANYTHING else i can help with?  \n", {"end_phrase": "Is there anything else I can help with?"}),
        ("Thanks. Is there anything else I can help with", {"end_phrase": "Is there anything else I can help with?"}),
        ("anything", {"end_phrase": ""}),
        ("", {"end_phrase": ""}),
        ("x", {"end_phrase": None}),
        ("x", {}),
    ]):
        add(f"end-checker-{i}", resp, "startend:end_checker", kw)
    add("end-checker-hub", "All done. Any other questions?", "startend:end_checker", hub(end_phrase="Any other questions?"))
    for i, resp in enumerate(['"quoted"', "'single'", '"mixed\'', '"', "'", "  \"padded\"  ", "\u201csmart\u201d", "", '""']):
        add(f"quotation-{i}", resp, "startend:quotation")

    # --- count ---
    for i, (resp, n) in enumerate([("all lower words", 3), ("Some lower Words", 2), ("a1 b2 123", 2), ("straße ǅx", 1), ("", 0), ("x", None)]):
        add(f"lowercase-counting-{i}", resp, "count:lowercase_counting", {"N": n})
    for i, (resp, kw) in enumerate([("go go go", {"keyword": "go", "N": 3}), ("Go", {"keyword": "GO", "N": 2}), ("go", {"keyword": "go"}), ("go", {"keyword": None, "N": 1}), ("go", {"keyword": "go", "N": None})]):
        add(f"increment-{i}", resp, "count:count_increment_word", kw)
    for i, (resp, n) in enumerate([("a b c a", 3), ("a b c a", 4), ("A a", 2), ("", 0), ("x", "1")]):
        add(f"unique-{i}", resp, "count:count_unique", {"N": n})
    add("composition-0", "anything", "count:counting_composition", {"n_sent": 3})

    # --- letters ---
    for iid in ("letters:letter_counting", "letters:letter_counting2"):
        for i, (resp, kw) in enumerate([
            ("mississippi", {"letter": "s", "N": 4, "relation": "exactly"}),
            ("mississippi", {"letter": "S", "num_letters": 4}),
            ("mississippi", {"letter": "s", "N": 5}),
            ("mississippi", {"letter": "s", "N": 3, "relation": "at most"}),
            ("x", {"letter": None, "N": 1}),
        ]):
            add(f"{iid}-{i}", resp, iid, kw)
    # --- paragraphs ---
    for iid in ("paragraphs:paragraphs", "paragraphs:paragraphs2"):
        for i, (resp, kw) in enumerate([("a\n\nb", {"num_paragraphs": 2}), ("a\nb", {"num_paragraphs": 2}), ("a", {}), ("a\n\nb", {"num_paragraphs": None})]):
            add(f"{iid}-{i}", resp, iid, kw)
    # --- language (langdetect absent: a string language passes) ---
    for i, (resp, kw) in enumerate([("This is English.", {"language": "en"}), ("Ceci est français.", {"language": "de"}), ("", {"language": "ru"}), ("x", {"language": None}), ("x", {})]):
        add(f"language-{i}", resp, "language:response_language", kw)
    add("language-hub", "Hola", "language:response_language", hub(language="kn"))
    # --- copy ---
    for i, (resp, kw) in enumerate([("echo echo", {"phrase": "echo", "N": 2}), ("echo", {"phrase": "echo", "num_repeats": 2}), ("Echo", {"phrase": "echo", "N": 1}), ("ab", {"phrase": "", "N": 3}), ("x", {"phrase": 1, "N": 1})]):
        add(f"repeat-phrase-{i}", resp, "copy:repeat_phrase", kw)
    # --- combination ---
    for i, resp in enumerate(["First.\n******\nSecond.", "Response 1: a", "a --- b", "a ===", "just one", "**", ""]):
        add(f"two-responses-{i}", resp, "combination:two_responses")
    for i, resp in enumerate(["Repeat this request word for word. Then answer.", "no repeat"]):
        add(f"repeat-prompt-{i}", resp, "combination:repeat_prompt", hub(prompt_to_repeat="Repeat this request word for word."))
    add("unknown-id", "x", "made_up:instruction", {})
    add("unknown-id-spaces", "a, b", " punctuation:no_comma ", {})

    # --- seeded random texts for the counts we compute in one pass instead of by regex ---
    rng = random.Random(50)
    for i in range(40):
        text = "".join(rng.choice([" ", "\n", "\n", "*", "-", "•", "a", "\t", "\r", "\x85"]) for _ in range(rng.randint(0, 24)))
        add(f"random-bullets-{i}", text, "detectable_format:number_bullet_lists", {"num_bullets": rng.randint(0, 4)})
    for i in range(40):
        text = "".join(rng.choice(["[", "]", "[", "]", "\n", "a", "\r", " "]) for _ in range(rng.randint(0, 24)))
        add(f"random-placeholders-{i}", text, "detectable_content:number_placeholders", {"num_placeholders": rng.randint(0, 4)})

    # --- whole prompts: several instructions, the row's kwargs shapes ---
    add("multi-all-met", "# Title\n\nhello world, here it is.\n\nP.S. bye", ["detectable_format:title", "keywords:existence", "detectable_content:postscript"], [{}, {"keywords": ["hello"]}, {}])
    add("multi-some-met", "hello, world", ["punctuation:no_comma", "keywords:existence", "change_case:english_lowercase"], [{}, {"keywords": ["hello"]}, {}])
    add("multi-none-met", "Hello, World!", ["punctuation:no_comma", "change_case:english_lowercase", "punctuation:punctuation_exclamation"], [{}, {}, {}])
    add("multi-empty-list", "anything", [], [])
    add("multi-duplicate-id", "a, b", ["punctuation:no_comma", "keywords:existence", "punctuation:no_comma"], [{}, {"keywords": ["a"]}, {}])
    add("multi-duplicate-id-last-wins", "hello", ["keywords:existence", "keywords:existence"], [{"keywords": ["hello"]}, {"keywords": ["bye"]}])
    add("multi-json-string-kwargs", "one two three", ["length_constraints:number_words", "keywords:existence"], ['{"relation": "exactly", "num_words": 3}', '{"keywords": ["two"]}'])
    add("multi-bad-json-string-kwargs", "one two", ["length_constraints:number_words"], ['{not json'])
    add("multi-json-null-kwargs", "one two", ["length_constraints:number_words", "punctuation:no_comma"], ['null', 'null'])
    add("multi-json-list-kwargs", "one two", ["length_constraints:number_words"], ['[1, 2]'])
    add("multi-nan-kwargs", "one two", ["length_constraints:number_words"], ['{"relation": "at least", "num_words": NaN}'])
    add("multi-null-kwargs", "one two", ["length_constraints:number_words", "punctuation:no_comma"], [None, None])
    add("multi-int-kwargs", "one two", ["length_constraints:number_words"], [7])
    add("multi-short-kwargs", "one two", ["length_constraints:number_words", "punctuation:no_comma"], [{"relation": "at least", "num_words": 2}])
    add("multi-long-kwargs", "one", ["punctuation:no_comma"], [{}, {"extra": 1}])
    add("multi-hub-row", "<<A Poem>>\n\n*roses* are red\n\n*violets* are blue", ["detectable_format:title", "detectable_format:number_highlighted_sections", "length_constraints:number_paragraphs", "punctuation:no_comma"], [hub(), hub(num_highlights=2), hub(num_paragraphs=3), hub()])
    add("multi-long-response", (long_para + " ") * 200, ["length_constraints:number_words", "length_constraints:number_sentences", "keywords:frequency"], [{"relation": "at least", "num_words": 1800}, {"relation": "exactly", "num_sentences": 200}, {"keyword": "fox", "relation": "exactly", "frequency": 200}])
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    git_dir = sys.argv[1]
    tag = sys.argv[2] if len(sys.argv) > 2 else "v0.5.5"
    verify_all, parse_kwargs, commit = load(git_dir, tag)
    rows = []
    for c in cases():
        ids = c["instruction_id_list"]
        fraction, results = verify_all(c["response"], ids, parse_kwargs(c["kwargs"], ids))
        rows.append({**c, "results": [[k, bool(v)] for k, v in results.items()], "fraction": fraction, "strict": fraction == 1.0})
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)), "case names must be unique"
    try:
        import langdetect  # noqa: F401
        sys.exit("langdetect is installed: these goldens are made without it (see the docstring)")
    except ImportError:
        pass
    doc = {
        "generator": "scripts/goldens/ifeval.py",
        "cookbook": {"tag": tag, "commit": commit, "files": [VERIFY, COMMON + ":parse_kwargs"]},
        "python": sys.version.split()[0],
        "not_installed": {"langdetect": "not in the local wheel index; an optional extra of the cookbook, without which language:response_language passes"},
        "accuracy": {
            "strict_accuracy": sum(1 for r in rows if r["fraction"] == 1.0) / len(rows),
            "loose_accuracy": sum(r["fraction"] for r in rows) / len(rows),
        },
        "cases": rows,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(rows)} cases → {OUT.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
