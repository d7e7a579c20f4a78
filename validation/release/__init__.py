"""A dataset release: Parquet splits in the Hugging Face layout, a dataset card and Croissant 1.0."""

from validation.release.build import Release, release_archive, release_build, release_zip
from validation.release.splits import SPLITS

__all__ = ["SPLITS", "Release", "release_archive", "release_build", "release_zip"]
