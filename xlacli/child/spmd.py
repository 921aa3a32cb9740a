"""The SPMD observer (child process only): meshes and ``mark_sharding`` calls.

torch_xla's SPMD API is plain Python (``xs.Mesh``, ``xs.mark_sharding``), so the
observer wraps both before the model file is imported: each distinct sharding
a step asks for becomes a ``sharding`` event carrying the user's line, the mesh
and the partition spec; a mesh the devices cannot hold becomes one clear usage
error instead of torch_xla's assertion deep in the user's frames.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.distributed.spmd.xla_sharding as xla_sharding
import torch_xla.runtime as xr

from xlacli.child.steps import xla_type
from xlacli.errors import ModelError, UsageError
from xlacli.paths import display_location
from xlacli.run_folder.events import EventWriter

_LIBRARY_DIRS = (
    *(os.path.dirname(module.__file__ or "") + os.sep for module in (torch, torch_xla)),
    os.path.dirname(__file__) + os.sep,
)


def mesh_record(mesh: Any) -> dict[str, Any]:
    """A mesh as JSON: its shape, axis names and device ids."""
    names = mesh.axis_names or tuple(f"axis{i}" for i in range(len(mesh.mesh_shape)))
    return {
        "shape": [int(size) for size in mesh.mesh_shape],
        "axis_names": [str(name) for name in names],
        "device_ids": [int(device) for device in mesh.device_ids],
    }


class SpmdObserver:
    """Wraps torch_xla's SPMD entry points to record what the model asks for.

    Args:
        requested_devices: the ``--devices`` the run asked for, if any.
    """

    def __init__(self, requested_devices: int | None):
        self.requested_devices = requested_devices
        self._problem: str | None = None
        self._seen: set[tuple[Any, ...]] = set()
        self._new: list[dict[str, Any]] = []
        # Meshes the user built: one reaching torch_xla only through
        # MpDeviceLoader(input_sharding=xs.ShardingSpec(mesh, ...)) is
        # neither global nor passed to mark_sharding.
        self._new_meshes: list[dict[str, Any]] = []
        original_init = xla_sharding.Mesh.__init__
        original_mark = xla_sharding.mark_sharding

        # Plain functions, not partials: Mesh.__init__ must bind as a method.
        @functools.wraps(original_init)
        def mesh_init(mesh: Any, *args: Any, **kwargs: Any) -> None:
            self._observed_mesh_init(original_init, mesh, *args, **kwargs)

        @functools.wraps(original_mark)
        def mark_sharding(*args: Any, **kwargs: Any) -> Any:
            return self._observed_mark_sharding(original_mark, *args, **kwargs)

        xla_sharding.Mesh.__init__ = mesh_init  # type: ignore[method-assign,assignment]
        for module in (xs, xla_sharding):
            setattr(module, "mark_sharding", mark_sharding)  # noqa: B010 (untyped re-export)

    def _observed_mesh_init(self, original: Any, mesh: Any, *args: Any, **kwargs: Any) -> None:
        try:
            original(mesh, *args, **kwargs)
        except AssertionError as error:
            self._problem = f"the mesh at {display_location(_user_site())}: {error}"
            raise
        self._new_meshes.append({**mesh_record(mesh), "site": _user_site()})

    def _observed_mark_sharding(
        self, original: Any, tensor: Any, mesh: Any, partition_spec: Any, *args: Any, **kw: Any
    ) -> Any:
        result = original(tensor, mesh, partition_spec, *args, **kw)
        site = _user_site()
        spec = [list(p) if isinstance(p, tuple) else p for p in partition_spec]
        key = (site, tuple(map(str, spec)), tuple(mesh.mesh_shape), tuple(tensor.shape))
        if key not in self._seen:
            self._seen.add(key)
            target = tensor.global_tensor if hasattr(tensor, "global_tensor") else tensor
            self._new.append(
                {
                    "site": site,
                    "spec": spec,
                    "mesh": mesh_record(mesh),
                    "type": xla_type(target),
                    "hlo_sharding": torch_xla._XLAC._get_xla_sharding_spec(target),
                }
            )
        return result

    @contextlib.contextmanager
    def usage_errors(self) -> Iterator[None]:
        """Turn a model failure caused by an impossible mesh into a usage error (exit 2)."""
        try:
            yield
        except ModelError:
            if self._problem is None:
                raise
            raise UsageError(self._problem, hint=self._devices_hint()) from None

    def _devices_hint(self) -> str:
        count = xr.global_runtime_device_count()
        if os.environ.get("PJRT_DEVICE", "CPU") == "CPU":
            return (
                f"this run has {count} devices: give the mesh {count} device ids, or run with "
                "--devices N (virtual CPU devices) where N is the mesh's size"
            )
        return f"this host has {count} devices: give the mesh a shape whose product is {count}"

    def start_fields(self) -> dict[str, Any]:
        """What the ``start`` event says about SPMD; checks the requested device count.

        Raises:
            UsageError: more devices were requested than the backend has.
        """
        devices = xr.global_runtime_device_count()
        if self.requested_devices is not None and self.requested_devices > devices:
            raise UsageError(
                f"--devices {self.requested_devices} asks for more devices than exist "
                f"({devices} on {xr.device_type()})",
                hint=f"use --devices {devices} or fewer",
            )
        mesh = xs.get_global_mesh()
        return {
            "spmd": bool(xr.is_spmd()),
            "global_devices": devices,
            "global_mesh": mesh_record(mesh) if mesh is not None else None,
        }

    def write_new_shardings(self, events: EventWriter, step: int | None) -> None:
        """One ``sharding`` event for the shardings first asked for in this step."""
        if not self._new and not self._new_meshes:
            return
        mesh = xs.get_global_mesh()
        events.write(
            "sharding",
            step=step,
            shardings=self._new,
            meshes=self._new_meshes,
            global_mesh=mesh_record(mesh) if mesh is not None else None,
        )
        self._new, self._new_meshes = [], []


def _user_site() -> str:
    """The ``file:line`` of the innermost frame outside torch, torch_xla and xlacli."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "unknown"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"
