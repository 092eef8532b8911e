"""The LTR model (methods.md §9): a random-forest regressor trained on a features file, saved as
ONNX with what it was trained on, and loaded only for the features and artefacts it knows.

The model file is an ONNX model (:mod:`elquery.linking.ltr.forest`): no pickle, nothing that runs
code, readable across library versions. Its ``metadata_props`` hold, under :data:`METADATA_KEY`,
a JSON :class:`ModelInfo`: the feature names in column order, the learner's parameters and seed,
the training data (file name, SHA-256, rows, queries, positives), the provenance ids of the index
and surface-form store its features were extracted from (recorded by ``elquery ltr features`` in
the file's ``.meta.json``) and the commonness threshold used.

``LtrModel.load(path, artefacts={"index": ..., "surface_forms": ...})`` refuses, in one line, a
model for other features than :data:`~elquery.linking.ltr.features.FEATURES`, or one trained on
features of other artefacts than those given. ``model.score(matrix)`` gives scikit-learn's
predictions for the rows of a feature matrix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from elquery.base import ElqueryError
from elquery.files import write_bytes_atomically
from elquery.kb.provenance import elquery_version, read_provenance
from elquery.linking.ltr.features import FEATURES
from elquery.linking.ltr.forest import (ENGINES, CompiledEngine, OnnxRuntimeEngine, compiled_available, from_onnx,
                                        from_sklearn, to_onnx)

FORMAT = "elquery-ltr-model/1"
METADATA_KEY = "elquery-ltr"
DEFAULT_TREES = 1000
MAX_TREES = 10_000
"""The most trees a forest may have (ten times the paper's): a bound on training time, model size
and the work of every scored pair."""
DEFAULT_MAX_FEATURES = 3
DEFAULT_SEED = 1
AUTO = "auto"


@dataclass(frozen=True)
class ModelInfo:
    """What a model was trained on and how (stored in the model file)."""

    features: tuple[str, ...]
    learner: dict[str, Any]
    training: dict[str, Any]
    artefacts: dict[str, str | None]
    commonness_threshold: float | None
    elquery_version: str
    forest: dict[str, int] = field(default_factory=dict)
    format: str = FORMAT

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "features": list(self.features)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: str) -> ModelInfo:
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                raise ElqueryError(f"{where}: not an elquery LTR model (format {data.get('format')!r}, expected {FORMAT!r})")
            return cls(tuple(data["features"]), dict(data["learner"]), dict(data["training"]), dict(data["artefacts"]),
                       data["commonness_threshold"], data["elquery_version"], dict(data.get("forest", {})))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ElqueryError(f"{where}: malformed elquery LTR model metadata ({exc})") from None


def artefact_ids(artefacts: Mapping[str, object]) -> dict[str, str | None]:
    """The provenance id of each artefact (a path, or an open artefact with a ``path``); None for
    one built without a provenance record."""
    ids: dict[str, str | None] = {}
    for name, artefact in artefacts.items():
        path = artefact if isinstance(artefact, str | Path) else getattr(artefact, "path", None)
        if path is None:
            raise ElqueryError(f"artefact {name!r}: no path to read its provenance from")
        record = read_provenance(path)
        ids[name] = None if record is None else record.id
    return ids


class LtrModel:
    """A loaded model: :attr:`info` and :meth:`score`. Safe to share between threads."""

    def __init__(self, path: Path, info: ModelInfo, engine: CompiledEngine | OnnxRuntimeEngine) -> None:
        self.path = path
        self.info = info
        self.engine = engine

    @classmethod
    def load(cls, path: Path | str, artefacts: Mapping[str, object] | None = None,
             features: Sequence[str] = FEATURES, engine: str = AUTO) -> LtrModel:
        """The model at ``path``, checked against ``features`` (the extractor's names, in order)
        and, when given, the ``artefacts`` (name -> path or open artefact: ``index``,
        ``surface_forms``) whose features it will score; ``engine`` one of :data:`ENGINES` or
        ``auto`` (compiled when numba is installed)."""
        if engine not in (AUTO, *ENGINES):
            raise ElqueryError(f"unknown LTR engine {engine!r}; engines are {', '.join((AUTO, *ENGINES))}")
        path = Path(path)
        data, model, info = _open(path)
        _check(path, info, features, artefacts)
        arrays = from_onnx(model)
        if arrays.features != len(info.features):
            raise ElqueryError(f"{path}: the forest reads {arrays.features} features, the metadata names {len(info.features)}")
        if engine == AUTO:
            engine = "compiled" if compiled_available() else "onnxruntime"
        if engine == "compiled":  # its arrays memory-mapped from a file: processes of one model share them
            from elquery.linking.ltr.forest_file import shared_forest

            runner: CompiledEngine | OnnxRuntimeEngine = CompiledEngine(
                shared_forest(arrays, hashlib.sha256(data).hexdigest()))
        else:
            runner = OnnxRuntimeEngine(data)
        return cls(path, info, runner)

    @staticmethod
    def read_info(path: Path | str, artefacts: Mapping[str, object] | None = None,
                  features: Sequence[str] = FEATURES) -> ModelInfo:
        """What :meth:`load` checks, without loading the forest: the model's :class:`ModelInfo`."""
        path = Path(path)
        info = _open(path)[2]
        _check(path, info, features, artefacts)
        return info

    def score(self, matrix: np.ndarray) -> np.ndarray:
        """The model's score of each row of a feature matrix (columns in :attr:`info` features
        order), as scikit-learn's ``predict`` gives it (rows are read as float32, as it reads them)."""
        rows = np.asarray(matrix, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != len(self.info.features):
            raise ElqueryError(f"a feature matrix for this model has {len(self.info.features)} columns, "
                               f"got shape {rows.shape}")
        if len(rows) == 0:
            return np.zeros(0)
        if not np.all(np.isfinite(rows)):
            raise ElqueryError("a feature value is not a finite number")
        return self.engine.predict(rows.astype(np.float32))


def require_extra(module: str) -> Any:
    """``module`` of the ``ltr`` extra, imported; a one-line error when the extra is missing."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ElqueryError(f"learning to rank needs a dependency of elquery that is missing here: pip install elquery "
                           f"({module} is not installed)") from None


def _open(path: Path) -> tuple[bytes, Any, ModelInfo]:
    """The file's bytes, its ONNX model and its :class:`ModelInfo`; one-line errors."""
    onnx = require_extra("onnx")

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ElqueryError(f"{path}: no such model file") from None
    except IsADirectoryError:
        raise ElqueryError(f"{path}: is a directory, not a model file") from None
    try:
        model = onnx.load_from_string(data)
    except Exception:  # protobuf's DecodeError and friends: not a model file
        raise ElqueryError(f"{path}: not an ONNX model file") from None
    props = {p.key: p.value for p in model.metadata_props}
    if METADATA_KEY not in props:
        raise ElqueryError(f"{path}: not an elquery LTR model (no {METADATA_KEY} metadata)")
    return data, model, ModelInfo.from_json(props[METADATA_KEY], str(path))


def _check(path: Path, info: ModelInfo, features: Sequence[str], artefacts: Mapping[str, object] | None) -> None:
    check_features(path, info.features, features)
    if artefacts is not None:
        check_artefacts(path, info.artefacts, artefact_ids(artefacts))


def check_features(path: Path | str, trained: Sequence[str], wanted: Sequence[str]) -> None:
    """A model is for exactly the features (names and order) the extractor computes."""
    if tuple(trained) == tuple(wanted):
        return
    missing = [f for f in wanted if f not in trained]
    extra = [f for f in trained if f not in wanted]
    if missing or extra:
        detail = "; ".join(part for part in (f"it lacks {', '.join(missing)}" if missing else "",
                                             f"it has {', '.join(extra)}" if extra else "") if part)
    else:
        detail = "the same names in another order"
    raise ElqueryError(f"{path}: the model was trained on other features than elquery's ({detail}); "
                       "extract features with `elquery ltr features` and train it again")


def check_artefacts(path: Path | str, trained: Mapping[str, str | None], given: Mapping[str, str | None]) -> None:
    """A model scores features of the artefacts its training features came from."""
    for name, identity in given.items():
        if trained.get(name, "unknown") != identity:
            was = trained.get(name) or "unknown"
            raise ElqueryError(f"{path}: the model was trained on features of another {name.replace('_', ' ')} "
                               f"(provenance id {was}, these artefacts have {identity or 'no provenance record'}); "
                               "extract features over these artefacts and train a model on them")


# --- training ---------------------------------------------------------------------------------------


def train_forest(matrix: np.ndarray, labels: np.ndarray, trees: int = DEFAULT_TREES,
                 max_features: int = DEFAULT_MAX_FEATURES, seed: int = DEFAULT_SEED, workers: int = 1,
                 one_label: bool = False) -> Any:
    """The random-forest regressor of methods.md §9 (scikit-learn; ``trees`` trees, ``max_features``
    features tried per split, fully grown), fitted on labels 0/1; the same for a seed whatever
    ``workers``. Labels that are all the same are refused unless ``one_label`` (an experiment's
    fold may hold no positive pair: its forest then scores every pair with that label)."""
    RandomForestRegressor = require_extra("sklearn.ensemble").RandomForestRegressor

    if not 1 <= trees <= MAX_TREES:
        raise ElqueryError(f"the forest's trees must be between 1 and {MAX_TREES}, got {trees}")
    if not 1 <= max_features <= matrix.shape[1]:
        raise ElqueryError(f"max features must be between 1 and {matrix.shape[1]}, got {max_features}")
    if len(set(labels.tolist())) < 2 and not one_label:
        raise ElqueryError(f"every training label is {labels[0]}: nothing to learn (label the features with --qrels)")
    forest = RandomForestRegressor(n_estimators=trees, max_features=max_features, random_state=seed, n_jobs=workers)
    forest.fit(matrix, labels.astype(np.float64))
    forest.set_params(n_jobs=1)
    return forest


def model_bytes(forest: Any, info: ModelInfo) -> bytes:
    """The ONNX file of a fitted forest with its metadata (the forest's size added)."""
    require_extra("onnx")
    arrays = from_sklearn(forest)
    info = ModelInfo(info.features, info.learner, info.training, info.artefacts, info.commonness_threshold,
                     info.elquery_version, {"trees": arrays.trees, "nodes": arrays.nodes})
    return to_onnx(arrays, {METADATA_KEY: info.to_json()})


def learner_parameters(forest: Any) -> dict[str, Any]:
    from sklearn import __version__ as sklearn_version

    params = forest.get_params()
    return {"name": "RandomForestRegressor", "library": f"scikit-learn {sklearn_version}",
            "trees": params["n_estimators"], "max_features": params["max_features"], "seed": params["random_state"],
            "criterion": params["criterion"], "min_samples_leaf": params["min_samples_leaf"],
            "bootstrap": params["bootstrap"]}


def new_info(forest: Any, training: Mapping[str, Any], artefacts: Mapping[str, str | None],
             commonness_threshold: float | None) -> ModelInfo:
    return ModelInfo(tuple(FEATURES), learner_parameters(forest), dict(training), dict(artefacts), commonness_threshold,
                     elquery_version())


def write_model(path: Path | str, data: bytes) -> None:
    """Write the model file atomically (:func:`~elquery.files.write_bytes_atomically`)."""
    write_bytes_atomically(path, data)
