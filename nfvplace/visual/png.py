"""PNG from the same SVG text, through cairosvg (Debian's libcairo2 underneath)."""

from __future__ import annotations

from .. import errors
from ..errors import NfvplaceError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def to_png(svg: str, *, scale: float = 1.0) -> bytes:
    """Rasterise `svg` (as drawn by `host_svg` or `heatmap_svg`) to PNG bytes."""
    try:
        import cairosvg  # type: ignore[import-untyped]
    except ImportError:
        raise NfvplaceError(
            errors.USAGE_MISSING_EXTRA,
            "PNG output needs cairosvg, which is not installed: pip install 'nfvplace[png]' "
            "(with the cairo library, libcairo2), or write .svg",
        ) from None
    except OSError as error:  # cairosvg is there, the cairo library itself is missing
        raise NfvplaceError(
            errors.RENDER_UNSUPPORTED,
            f"PNG output needs the cairo library ({error}): apt-get install libcairo2, "
            "or write .svg",
        ) from None
    png: bytes = cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    return png
