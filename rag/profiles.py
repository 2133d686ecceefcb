"""Calibration profiles: the relevance filter's thresholds for one embedding model.

A profile is a small JSON file ``{"model_id", "params": {...}, ...}``. Retrieval loads the one for
the configured model automatically: ``RAG_PROFILE`` names a file explicitly; otherwise
``<data_dir>/profiles/<slug>.json`` (written by ``rag calibrate``) wins over the profile shipped
in ``rag/profiles/``. Without a profile the settings' values apply.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rag.errors import ConfigError
from rag.relevance import FilterParams
from rag.settings import Settings

SHIPPED_DIR = Path(__file__).resolve().parent / "profiles"


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


def filter_params(settings: Settings, model_id: str | None) -> tuple[FilterParams, Path | None]:
    """The filter's parameters for ``model_id``: its profile over the settings' values."""
    params = FilterParams.from_settings(settings)
    path = profile_path(settings, model_id) if model_id else None
    if path is None:
        return params, None
    data = read_profile(path)
    if model_id and data.get("model_id") not in (None, model_id):
        raise ConfigError(
            f"calibration profile {path} is for {data.get('model_id')}, not {model_id}; "
            "run `rag calibrate` for this model"
        )
    known = set(FilterParams.__slots__)
    values = {k: v for k, v in data["params"].items() if k in known}
    merged = {**params.as_dict(), **values}
    return FilterParams(**merged), path


# The RRF knobs a profile's additive "fusion" section may set (rag.fusion chooses them).
FUSION_KEYS = ("rrf_k", "rrf_weight_fts", "rrf_weight_vector", "candidates")


def fusion_settings(settings: Settings, model_id: str | None) -> Settings:
    """``settings`` with the fusion section of ``model_id``'s profile applied, if it has one."""
    path = profile_path(settings, model_id) if model_id else None
    if path is None:
        return settings
    fusion = read_profile(path).get("fusion")
    if not isinstance(fusion, dict):
        return settings
    try:
        values = {
            k: int(fusion[k]) if k in ("rrf_k", "candidates") else float(fusion[k])
            for k in FUSION_KEYS
            if k in fusion
        }
    except (TypeError, ValueError) as e:
        raise ConfigError(f"calibration profile {path} has a bad fusion section: {e}") from e
    return settings.replace(**values)


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
