"""Tests of the documentation: design-document citations resolve, README snippets run."""

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
README = ROOT / "README.md"
SCANNED = ("trees", "relabel", "ensemble", "tests", "benchmarks", "examples")

# Written in two pieces so that this file does not cite the document itself.
_DOC = "docs/design" + ".md"
# "docs/design.md section 4c", "sections 4b-4c", "sections 4 and 5", possibly broken
# across lines of a docstring or a comment (normalised away first).
_CITATION = re.compile(
    re.escape(_DOC) + r"(?:'s)?,?\s+sections?\s+(\d+[a-z]?\b(?:\s*(?:,|-|–|and)\s*\d+[a-z]?\b)*)"
)
_HEADING = re.compile(r"^#{2,3} (\d+[a-z]?)\. ", flags=re.M)


def design_sections(text: str) -> set[str]:
    """Section numbers of the design document: headings ``## N. Title`` and ``### Nb. Title``."""
    return set(_HEADING.findall(text))


def citations(text: str) -> list[tuple[int, str]]:
    """``(line, section)`` for every section a text cites in the design document."""
    # Join continuation lines (and their comment markers) so a citation may wrap.
    joined, line_of = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        piece = re.sub(r"^\s*#*\s*", "", line) if joined else line
        joined.append(piece)
        line_of.extend([number] * (len(piece) + 1))
    flat = " ".join(joined)
    found = []
    for match in _CITATION.finditer(flat):
        for section in re.findall(r"\d+[a-z]?", match.group(1)):
            found.append((line_of[match.start()], section))
    return found


def missing_citations(files: dict[str, str], design_text: str) -> list[str]:
    """``path:line cites section N`` for every citation whose section has no heading."""
    sections = design_sections(design_text)
    return [
        f"{path}:{line} cites section {section}"
        for path, text in files.items()
        for line, section in citations(text)
        if section not in sections
    ]


def _scanned_files() -> dict[str, str]:
    files = {"README.md": README.read_text(encoding="utf-8")}
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            files[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return files


def test_design_document_has_every_numbered_section():
    """Check that docs/design.md has the sections 1-12, 4b and 4c as headings."""
    sections = design_sections(DESIGN.read_text(encoding="utf-8"))
    expected = {str(n) for n in range(1, 13)} | {"4b", "4c"}
    assert expected <= sections, f"missing sections: {sorted(expected - sections)}"


def test_every_design_citation_names_an_existing_section():
    """Check that every "docs/design.md section N" of the code and the README has a heading N."""
    files = _scanned_files()
    found = sum(len(citations(text)) for text in files.values())
    # The code cites the document some 90 times; far fewer means the pattern broke.
    assert found > 60
    assert missing_citations(files, DESIGN.read_text(encoding="utf-8")) == []


def test_citation_check_fails_when_a_section_is_missing():
    """Check that removing a cited section's heading makes the citation check report it."""
    design = DESIGN.read_text(encoding="utf-8")
    without_4c = re.sub(r"^### 4c\. .*$", "### Float slivers", design, flags=re.M)
    code = f'"""Snapping.\n\nThreshold rules ({_DOC}\n    section 4c) and votes ({_DOC} sections 4 and\n    5)."""\n'
    assert citations(code) == [(3, "4c"), (4, "4"), (4, "5")]
    assert missing_citations({"x.py": code}, design) == []
    assert missing_citations({"x.py": code}, without_4c) == ["x.py:3 cites section 4c"]
    wrapped = f"# see {_DOC}\n# sections 4b-4c, 7\n"
    assert [s for _, s in citations(wrapped)] == ["4b", "4c", "7"]


def test_no_citation_of_the_team_notes():
    """Check that nothing in the repository cites the team's private notes, a file users do not have."""
    files = _scanned_files()
    files["docs/design.md"] = DESIGN.read_text(encoding="utf-8")
    offenders = [path for path, text in files.items() if "DESIGN" + ".md" in text]
    assert offenders == []


def test_readme_points_at_the_design_document_early():
    """Check that the README links docs/design.md before its long sections begin."""
    text = README.read_text(encoding="utf-8")
    assert f"]({_DOC})" in text
    assert text.index(_DOC) < text.index("## What it is")


def test_readme_first_screen_answers_a_newcomer():
    """Check that set-up, a CSV quick start and the model choice come before the theory."""
    text = README.read_text(encoding="utf-8")
    order = [text.index(h) for h in ("## Set-up", "## Quick start on a CSV file", "## Which model when",
                                     "## What it is")]
    assert order == sorted(order)
    quick = text[order[1]:order[2]]
    for command in ("otreebagger evaluate", "otreebagger fit", "otreebagger predict"):
        assert command in quick


@pytest.mark.parametrize("index", range(len(re.findall(r"```python\n", README.read_text(encoding="utf-8")))))
def test_readme_python_snippet_runs_on_its_own(index):
    """Check that every Python snippet of the README runs alone, with nothing undefined."""
    snippet = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)[index]
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(snippet, f"README.md snippet {index}", "exec"), {"__name__": "__readme__"})


def test_public_docstrings_have_no_unfilled_shared_fragment():
    """Check that every public class and function of the packages has its shared fragments filled in
    (a ``{random_state}``-style placeholder left means fill_doc decorated something else)."""
    import importlib
    import inspect

    from ensemble.base._docs import _SHARED

    unfilled = []
    for package in ("ensemble", "relabel", "trees"):
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            doc = inspect.getdoc(obj) or ""
            unfilled += [f"{package}.{name}: {{{key}}}" for key in _SHARED if f"{{{key}}}" in doc]
    assert unfilled == []


DOCS = ROOT / "docs"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_TEST_COMMAND = 'python -m pip install -e ".[test]" && python -m pytest'


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_links(path: Path) -> list[str]:
    """Relative links of a Markdown file whose file, or whose #anchor in it, does not exist."""
    broken = []
    for target in _LINK.findall(path.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        name, _, anchor = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md":
            headings = re.findall(r"^#{1,6} (.+)$", linked.read_text(encoding="utf-8"), flags=re.M)
            if anchor not in {_anchor(h) for h in headings}:
                broken.append(target)
    return broken


def test_readme_is_short_and_its_documentation_links_resolve():
    """Check that the README stays under 300 lines and links the user guide, the metrics glossary, the design
    and the benchmarks page, and that every relative link (and #anchor) of the README and docs/ resolves."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    for page in ("docs/user_guide.md", "docs/metrics.md", "docs/design.md", "docs/benchmarks.md"):
        assert f"]({page}" in text, page
    pages = [README, *sorted(DOCS.glob("*.md"))]
    assert {p: broken_links(p) for p in pages} == {p: [] for p in pages}


def test_link_check_reports_a_missing_file_and_a_missing_anchor(tmp_path):
    """Check that the link check catches a link to a missing file and to a heading that is not there."""
    (tmp_path / "a.md").write_text("# Title\n\n## The forest\n\n[x](b.md) [y](a.md#the-forest) [z](#nowhere)\n")
    assert broken_links(tmp_path / "a.md") == ["b.md", "#nowhere"]


def test_readme_test_command_is_the_one_ci_runs():
    """Check that set-up command 2 of the README is, verbatim, the test command of .ci/run."""
    assert _TEST_COMMAND in README.read_text(encoding="utf-8")
    assert _TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_every_readme_figure_is_on_the_benchmarks_page():
    """Check that every measured figure of the README (a decimal number, or a count with a thousands comma)
    appears on the benchmarks page, where its command is: one figure per claim, the same in both."""
    readme = README.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", readme, flags=re.S)
    figures = set(re.findall(r"(?<![\w.])\d+(?:,\d{3})+(?![\w])|(?<![\w.])\d+\.\d+(?![\w.])", prose))
    figures -= {"3.10"}  # the Python version
    assert len(figures) >= 8
    benchmarks = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert sorted(f for f in figures if f not in benchmarks) == []
