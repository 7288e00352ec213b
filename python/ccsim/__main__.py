"""Allow ``python -m ccsim ...`` as an alias of the ``ccsim`` command."""

from .cli import main

if __name__ == "__main__":
    main()
