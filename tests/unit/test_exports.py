"""The packages that split a concern into modules keep one public face: every model, every
port and every name their ``__all__`` lists is importable from the package itself."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Protocol

import pytest

from graphmem import ports
from graphmem.domain import mentions, models, timewords
from graphmem.domain.models import Model


def _submodules(package: object) -> list[object]:
    path = package.__path__
    return [importlib.import_module(f"{package.__name__}.{m.name}") for m in pkgutil.iter_modules(path)]


@pytest.mark.parametrize("package", [models, mentions, timewords, ports], ids=lambda p: p.__name__)
def test_every_name_listed_is_there(package):
    assert sorted(package.__all__) == sorted(set(package.__all__))
    assert [name for name in package.__all__ if not hasattr(package, name)] == []


def test_every_model_is_exported_from_the_models_package():
    defined = {
        name
        for module in _submodules(models)
        for name, value in vars(module).items()
        if inspect.isclass(value) and issubclass(value, Model) and value.__module__ == module.__name__
    }
    assert defined - set(models.__all__) == set()


def test_every_port_is_exported_from_the_ports_package():
    defined = {
        name
        for module in _submodules(ports)
        for name, value in vars(module).items()
        if inspect.isclass(value) and Protocol in value.__mro__ and value.__module__ == module.__name__
    }
    assert defined and defined - set(ports.__all__) == set()
