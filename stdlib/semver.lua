--- semver: Semantic Versioning 2.0 versions and npm-style ranges
--- (docs/contract.md §5), for hooks. The engine checks hook versions
--- with the same code, so it lives below both, in lua/core/semver.lua
--- (`uphook.core.semver`); this module hands it on.
return require "uphook.core.semver"
