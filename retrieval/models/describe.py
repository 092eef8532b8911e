"""The registry's models described for people: ``elquery rank``'s help and the tables of
docs/commands/rank.md, generated from :data:`elquery.retrieval.models.MODELS` (a test checks the
page against them; ``python -m elquery.retrieval.models.describe docs/commands/rank.md`` rewrites
them there)."""

from __future__ import annotations

import sys
from pathlib import Path

from elquery.registry import Parameter
from elquery.retrieval.models import MODELS
from elquery.retrieval.models.entry import MIXTURE_FIELDS, RetrievalModel

BEGIN = "<!-- models: generated from the registry by python -m elquery.retrieval.models.describe PAGE -->"
END = "<!-- end of the generated models -->"


def groups(model: RetrievalModel) -> list[tuple[str, list[Parameter]]]:
    """The model's parameters in order, those of the mixture fields under one name
    (``weight.names`` and ``weight.content``: ``weight.FIELD``)."""
    found: list[tuple[str, list[Parameter]]] = []
    for parameter in model.parameters:
        head, _, last = parameter.name.rpartition(".")
        name = f"{head}.FIELD" if head and last in MIXTURE_FIELDS else parameter.name
        if found and found[-1][0] == name:
            found[-1][1].append(parameter)
        else:
            found.append((name, [parameter]))
    return found


def _value(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def default(parameters: list[Parameter]) -> str:
    """The default of a parameter, or of each field's (``names 0.2, content 0.8``); empty when
    it depends on others (the help says how)."""
    values = [p.default for p in parameters]
    if all(v is None for v in values):
        return ""
    if len(set(values)) == 1:
        return _value(values[0])
    return ", ".join(f"{p.name.rpartition('.')[2]} {_value(p.default)}" for p in parameters)


def value_range(name: str, parameter: Parameter) -> str:
    """The values ``parameter`` takes, said of ``name`` (its group's)."""
    phrases = [p for p in parameter.describe().split("; ") if not p.startswith(("default ", "demo KB "))]
    return phrases[0].replace(parameter.name, name) if phrases else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def needs(model: RetrievalModel) -> list[str]:
    """What the model reads besides the index's text fields, as the command line names it."""
    return ["--links"] * model.needs_links + ["an index built with --relations"] * model.needs_relations


def help_line(model: RetrievalModel) -> str:
    """The model in ``elquery rank --help``: name, summary, what it needs and its parameters."""
    parameters = ", ".join(f"{name} ({default(group)})" if default(group) else name for name, group in groups(model))
    need = f" (needs {' and '.join(needs(model))})" if needs(model) else ""
    return f"{model.name}: {model.summary}{need}; params {parameters}"


def markdown() -> str:
    """The tables of the models and of their parameters (docs/commands/rank.md)."""
    lines = ["| `--model` | model | reads besides the index's text fields |", "|---|---|---|"]
    for model in MODELS:
        read = ", ".join(f"`{n}`" if n.startswith("--") else "an index with relations" for n in needs(model))
        lines.append(f"| `{model.name}` | {_cell(f'{model.display}: {model.summary}')} | {read} |")
    lines += ["", f"`FIELD` is {' or '.join(f'`{f}`' for f in MIXTURE_FIELDS)}, the fields the mixtures weigh.", "",
              "| model | `--param` | default | values | meaning |", "|---|---|---|---|---|"]
    for model in MODELS:
        for i, (name, group) in enumerate(groups(model)):
            label = f"`{model.name}`" if i == 0 else ""
            lines.append(f"| {label} | `{name}` | {default(group)} | {_cell(value_range(name, group[0]))} | {_cell(group[0].help)} |")
    return "\n".join(lines) + "\n"


def page_tables(text: str) -> str:
    """The generated part of a page (between :data:`BEGIN` and :data:`END`)."""
    return text.split(BEGIN + "\n", 1)[1].split(END, 1)[0]


def rewrite(page: Path) -> None:
    """Replace the generated part of ``page`` by the registry's tables."""
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace(page_tables(text), markdown()), encoding="utf-8")


if __name__ == "__main__":
    rewrite(Path(sys.argv[1]))
