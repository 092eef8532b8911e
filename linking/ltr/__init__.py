"""Learning to rank for entity linking in queries (methods.md §9; Hasibi, Balog and Bratsberg,
ECIR 2017): the 28 features of a candidate (mention, entity) pair, a random-forest model trained
on them, saved as ONNX and run by a compiled engine.

::

    from elquery.linking.ltr import FeatureExtractor, LtrModel
    with FeatureExtractor(index_dir, surface_forms_db, commonness_threshold=0.1) as extractor:
        pairs, matrix = extractor.extract("new york pizza manhattan")   # CandidatePair per row, 28 columns
        model = LtrModel.load("model.onnx", artefacts={"index": index_dir, "surface_forms": surface_forms_db})
        scores = model.score(matrix)                                      # one score per pair

Modules: :mod:`~elquery.linking.ltr.features` (the features), :mod:`~elquery.linking.ltr.statistics`
(the one Java call per query), :mod:`~elquery.linking.ltr.language_models` (Eq. 16 from counts),
:mod:`~elquery.linking.ltr.feature_file` (TSV / LETOR files, ground truth),
:mod:`~elquery.linking.ltr.model` (training, the model file, loading),
:mod:`~elquery.linking.ltr.forest` (the forest's arrays, ONNX, the engines),
:mod:`~elquery.linking.ltr.cli` (``elquery ltr``).
"""

from elquery.base import lazy_exports

# imported on first use: importing the package (a command's start-up) loads none of them
__getattr__ = lazy_exports(__name__, {
    "elquery.linking.ltr.features": ("FEATURES", "CandidatePair", "FeatureExtractor"),
    "elquery.linking.ltr.model": ("LtrModel", "ModelInfo"),
})

__all__ = ["FEATURES", "CandidatePair", "FeatureExtractor", "LtrModel", "ModelInfo"]
