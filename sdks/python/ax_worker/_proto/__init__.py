"""Generated stubs of the ax.v1 contract (proto/ax/v1/*.proto). Do not edit: run generate.sh."""
