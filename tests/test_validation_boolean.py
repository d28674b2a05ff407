"""``pinkctl._validation.boolean``: the flag check the environments share."""

from __future__ import annotations

import numpy as np
import pytest

from pinkctl._validation import boolean
from pinkctl.errors import InputError


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_is_returned(value: bool) -> None:
    assert boolean(value, "flag") is value


@pytest.mark.parametrize("value", [1, 0, "yes", None, np.bool_(True)])
def test_anything_else_is_refused_with_the_argument_named(value: object) -> None:
    with pytest.raises(InputError, match=r"^jaw_pads must be a bool, got "):
        boolean(value, "jaw_pads")
