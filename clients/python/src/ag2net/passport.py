"""A passport's fields, checked before `register` or `attach` sends one, so that a misspelt field fails here with the
valid fields named, instead of the hub's `invalid_request`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import PassportError
from .models import Passport, PassportAuth, PassportCost0

#: The objects nested in a passport, by field, with the model of their fields.
_NESTED: Mapping[str, type[BaseModel]] = {"auth": PassportAuth, "cost": PassportCost0}
#: What the error about a nested object adds.
_HINTS: Mapping[str, str] = {"auth": ' (an API key: {"scheme": "api_key", "claim": {"token": "<key>"}})'}


def check_passport(passport: Mapping[str, Any]) -> None:
    """Raises `PassportError` for a field the passport (or its `auth` / `cost`) does not have, a missing `name` or a
    value of the wrong type; the message names the valid fields."""
    if not isinstance(passport, Mapping):
        raise PassportError(f"a passport is a dict of fields, got {type(passport).__name__}; {_fields(Passport)}")
    _check_keys("passport", passport, Passport)
    for field, model in _NESTED.items():
        value = passport.get(field)
        if isinstance(value, Mapping):
            _check_keys(f"passport[{field!r}]", value, model, _HINTS.get(field, ""))
    try:
        Passport.model_validate(dict(passport))
    except ValidationError as err:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in err.errors())
        raise PassportError(f"invalid passport: {problems}; {_fields(Passport)}") from None


def _check_keys(where: str, fields: Mapping[str, Any], model: type[BaseModel], hint: str = "") -> None:
    unknown = sorted(str(k) for k in fields if k not in model.model_fields)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        plural = "s" if len(unknown) > 1 else ""
        raise PassportError(f"{where} has no field{plural} {names}; {_fields(model)}{hint}")


def _fields(model: type[BaseModel]) -> str:
    """`its fields are: name (required), owner, …` of `model`, in its order."""
    names = [f"{name} (required)" if f.is_required() else name for name, f in model.model_fields.items()]
    return f"its fields are: {', '.join(names)}"


def _where(loc: tuple[int | str, ...]) -> str:
    return "passport" + "".join(f"[{part!r}]" for part in loc)
