"""``elquery data``: list, describe, download, verify, locate and link the registered datasets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from elquery.base import COMMAND_SUMMARIES, ElqueryError, positive_int
from elquery.data.registry import dataset, dataset_dir, datasets_dir, is_local_copy, load_registry

if TYPE_CHECKING:
    from elquery.data.download import FileState


def register(commands: argparse._SubParsersAction) -> None:
    data = commands.add_parser(
        "data", help=COMMAND_SUMMARIES["data"],
        description="The datasets elquery reads, from a registry shipped with the package: their files, mirrors, "
        "checksums, licence and citation. Files go under $ELQUERY_HOME/datasets/NAME (default ~/.elquery). "
        "Downloads resume, retry and fall back to the next mirror; a file is moved into place only once verified. "
        "See docs/data.md.")
    sub = data.add_subparsers(dest="data_command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="the datasets and whether they are here").set_defaults(func=_list)
    info = sub.add_parser("info", help="description, licence, citation, mirrors and files of a dataset")
    info.add_argument("name")
    info.set_defaults(func=_info)
    get = sub.add_parser("download", help="fetch a dataset's files (those not here yet)")
    get.add_argument("name")
    get.add_argument("--only", nargs="+", default=[], metavar="PART",
                     help="only these parts (e.g. index, surface-forms, tagme) or file names")
    get.add_argument("--retries", type=positive_int, default=4, metavar="N",
                     help="attempts per mirror before the next one (default 4; backoff doubles from 1 s)")
    get.set_defaults(func=_download)
    check = sub.add_parser("verify", help="check each file against its published or recorded SHA-256 and size")
    check.add_argument("name")
    check.add_argument("--only", nargs="+", default=[], metavar="PART", help="only these parts or file names")
    check.set_defaults(func=_verify)
    path = sub.add_parser("path", help="print the folder of a dataset (for --dumps, --data, ...), or without a name "
                          "the folder of all of them (ELQUERY_DATA of the experiment configs)")
    path.add_argument("name", nargs="?")
    path.set_defaults(func=_path)
    local = sub.add_parser("link", help="use a local copy of a dataset (a folder holding its files under the names "
                           "`info` lists, or under the publisher's names, its `from` names)")
    local.add_argument("name")
    local.add_argument("folder", type=Path)
    local.set_defaults(func=_link)


def _print_states(states: list[FileState]) -> int:
    for state in states:
        print(f"{state.state}\t{state.file}" + (f"\t{state.detail}" if state.detail else ""))
    bad = [s for s in states if s.state in ("missing", "bad")]
    if bad:
        print(f"{len(bad)} of {len(states)} files missing or not as recorded", file=sys.stderr)
    return 1 if bad else 0


def _list(args: argparse.Namespace) -> int:
    for name, entry in load_registry().items():
        folder = dataset_dir(name)
        here = sum((folder / file).is_file() for file in entry.files)
        where = "local copy" if is_local_copy(folder) else f"{here}/{len(entry.files)} files"
        print(f"{name}\t{where}\t{entry.description}")
    return 0


def _info(args: argparse.Namespace) -> int:
    entry = dataset(args.name)
    print(f"{entry.name}: {entry.description}\nlicence: {entry.licence}\ncitation: {entry.citation}\n"
          f"homepage: {entry.homepage}\nfolder: {dataset_dir(entry.name)}")
    for mirror in entry.mirrors:
        print(f"mirror: {mirror}")
    for part, files in entry.parts.items():
        print(f"part {part}: {', '.join(files)}")
    folder = dataset_dir(entry.name)
    for file in entry.files:
        source = entry.source(file)
        print(f"file: {file}\t{'here' if (folder / file).is_file() else 'not here'}"
              + (f"\tfrom {source}" if source != file else ""))
    return 0


def _download(args: argparse.Namespace) -> int:
    from elquery.data.download import download

    entry = dataset(args.name)
    states = download(entry, args.only, retries=args.retries)
    print(f"{sum(s.detail == 'downloaded' for s in states)} downloaded, {len(states)} files in "
          f"{dataset_dir(entry.name)}", file=sys.stderr)
    return 0


def _verify(args: argparse.Namespace) -> int:
    from elquery.data.download import verify

    return _print_states(verify(dataset(args.name), args.only))


def _path(args: argparse.Namespace) -> int:
    if args.name is None:
        folder = datasets_dir()
        if not folder.exists():
            raise ElqueryError(f"no dataset is here yet ({folder}): `elquery data download NAME` or "
                               "`elquery data link NAME FOLDER`")
    else:
        folder = dataset_dir(dataset(args.name).name)
        if not folder.exists():
            raise ElqueryError(f"{args.name} is not here yet: `elquery data download {args.name}`")
    print(folder)
    return 0


def _link(args: argparse.Namespace) -> int:
    from elquery.data.download import link

    entry = dataset(args.name)
    states = link(entry, args.folder)
    for state in states:
        print(f"{state.state}\t{state.file}")
    present = [s.file for s in states if s.state == "ok"]
    if len(present) < len(states):
        parts = ", ".join(entry.complete_parts(present)) or "none"
        print(f"linked {args.folder.resolve()}: {len(present)} of {len(states)} files of {entry.name}; complete parts: "
              f"{parts} (`elquery data download {entry.name}` fetches the others)", file=sys.stderr)
    return 0
