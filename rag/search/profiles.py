"""Calibration profiles: the relevance filter's thresholds for one embedding model.

A profile is a small JSON file ``{"model_id", "params": {...}, "relations"?: {...}, ...}``:
``params`` is the default set (questions in the corpus's own language); ``relations`` maps a
language relation (``other``, or a pair such as ``de>ru``; see :mod:`rag.search.relations`) to
``{"params": {...}, "contrast"?: c, ...its figures}``, each set's missing knobs taken from the
default (``contrast``: see :mod:`rag.search.relations`). A profile
without ``relations`` judges every question with ``params``. Retrieval loads the one for the
configured model automatically: ``RAG_PROFILE`` names a file explicitly; otherwise
``<data_dir>/profiles/<slug>.json`` (written by ``rag calibrate``) wins over the profile shipped
in ``rag/profiles/``. Without a profile the settings' values apply.

A pipeline with a reranker is another model setting: its profile is looked up under
:func:`rag.search.rerank.pipeline_id` (``<model>+rerank=<reranker>``) first, and only then under the
embedding model's own id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rag.errors import ConfigError
from rag.search.relations import SAME, is_relation_key
from rag.search.relevance import FilterParams
from rag.search.rerank import Reranker, pipeline_id
from rag.search.thresholds import Thresholds
from rag.settings import Settings

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "profiles"
MAX_CONTRAST = 10.0


def slug(model_id: str) -> str:
    """A file name for a model id."""
    return re.sub(r"[^a-zA-Z0-9._-]+", "_", model_id).strip("_") or "model"


def profile_path(settings: Settings, model_id: str) -> Path | None:
    """The profile that applies to ``model_id``, if any."""
    if settings.profile:
        if settings.profile.lower() == "none":
            return None
        path = Path(settings.profile).expanduser()
        if not path.exists():
            raise ConfigError(f"calibration profile not found: {path}")
        return path
    for directory in (settings.data_dir / "profiles", SHIPPED_DIR):
        path = directory / f"{slug(model_id)}.json"
        if path.exists():
            return path
    return None


def read_profile(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"unreadable calibration profile {path}: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("params"), dict):
        raise ConfigError(f"calibration profile {path} has no params object")
    return data


def filter_params(
    settings: Settings, model_id: str | None, *, reranker: Reranker | None = None
) -> tuple[FilterParams, Path | None]:
    """The filter's default parameters for ``model_id``: its profile over the settings' values."""
    found, path = thresholds(settings, model_id, reranker=reranker)
    return found.default, path


def thresholds(
    settings: Settings, model_id: str | None, *, reranker: Reranker | None = None
) -> tuple[Thresholds, Path | None]:
    """Every threshold set of ``model_id``'s profile (see the module docstring).

    A reranked pipeline looks for its own profile (``pipeline_id``) before the model's.
    """
    base = FilterParams.from_settings(settings)
    pipeline = pipeline_id(model_id, reranker) if model_id else None
    path = None
    if pipeline and pipeline != model_id:
        path = profile_path(settings, pipeline)
    if path is None and model_id:
        path = profile_path(settings, model_id)
    if path is None:
        return Thresholds(base), None
    data = read_profile(path)
    if model_id and data.get("model_id") not in (None, model_id, pipeline):
        raise ConfigError(
            f"calibration profile {path} is for {data.get('model_id')}, not {model_id}; "
            "run `rag calibrate` for this model"
        )
    default = _merged(base, data["params"])
    relations = data.get("relations") or {}
    if not isinstance(relations, dict):
        raise ConfigError(f"calibration profile {path}: relations must be an object")
    sets, contrast = {}, {}
    for key, entry in relations.items():
        if not is_relation_key(key) or not isinstance(entry, dict):
            raise ConfigError(
                f"calibration profile {path}: relation {key!r} is not same, other or a "
                "language pair like de>ru with a params object"
            )
        if not isinstance(entry.get("params"), dict):
            raise ConfigError(f"calibration profile {path}: relation {key!r} has no params")
        sets[key] = _merged(default, entry["params"])
        value = entry.get("contrast", 0.0)
        if not isinstance(value, int | float) or not 0 <= value <= MAX_CONTRAST:
            raise ConfigError(
                f"calibration profile {path}: relation {key!r} contrast must be a number "
                f"from 0 to {MAX_CONTRAST}"
            )
        if value:
            contrast[key] = float(value)
    if SAME in sets:
        default = sets[SAME]
    return Thresholds(default, sets, contrast), path


def relation_entries(path: Path | None) -> dict[str, Any]:
    """The ``relations`` section of the profile at ``path`` as stored (empty without one)."""
    if path is None:
        return {}
    relations = read_profile(path).get("relations")
    return dict(relations) if isinstance(relations, dict) else {}


def _merged(base: FilterParams, values: dict[str, Any]) -> FilterParams:
    known = set(FilterParams.__slots__)
    return FilterParams(**{**base.as_dict(), **{k: v for k, v in values.items() if k in known}})


# The RRF knobs a profile's additive "fusion" section may set (rag.search.fusion chooses them).
FUSION_KEYS = ("rrf_k", "rrf_weight_fts", "rrf_weight_vector", "candidates")


def fusion_settings(settings: Settings, model_id: str | None) -> Settings:
    """``settings`` with the fusion section of ``model_id``'s profile applied, if it has one."""
    path = profile_path(settings, model_id) if model_id else None
    if path is None:
        return settings
    fusion = read_profile(path).get("fusion")
    if not isinstance(fusion, dict):
        return settings
    return settings.replace(**_fusion_values(path, fusion))


def relation_fusion(settings: Settings, model_id: str | None) -> dict[str, dict[str, Any]]:
    """The RRF knobs of each relation set of ``model_id``'s profile that has its own
    (``relations[<key>]["fusion"]``); a relation without them keeps the profile's fusion."""
    path = profile_path(settings, model_id) if model_id else None
    out: dict[str, dict[str, Any]] = {}
    for key, entry in relation_entries(path).items():
        fusion = entry.get("fusion") if isinstance(entry, dict) else None
        if fusion is None:
            continue
        if not isinstance(fusion, dict) or not is_relation_key(key):
            raise ConfigError(f"calibration profile {path}: relation {key!r} fusion is no object")
        out[key] = _fusion_values(path, fusion)
    return out


def _fusion_values(path: Path | None, fusion: dict[str, Any]) -> dict[str, Any]:
    try:
        values = {
            k: int(fusion[k]) if k in ("rrf_k", "candidates") else float(fusion[k])
            for k in FUSION_KEYS
            if k in fusion
        }
    except (TypeError, ValueError) as e:
        raise ConfigError(f"calibration profile {path} has a bad fusion section: {e}") from e
    if values.get("rrf_k", 1) < 0 or values.get("candidates", 1) < 1:
        raise ConfigError(
            f"calibration profile {path}: fusion needs rrf_k >= 0 and candidates >= 1"
        )
    return values


def write_profile(path: Path, model_id: str, params: FilterParams, extra: dict[str, Any]) -> None:
    """Write a profile atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(
        json.dumps(
            {"model_id": model_id, "params": params.as_dict(), **extra},
            ensure_ascii=False,
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    tmp.replace(path)
