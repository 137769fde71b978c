--- ip: IPv4 and IPv6 addresses (docs/contract.md §5), for hooks. The
--- broker picks a resolv.conf's nameservers with the same code
--- (nodes.resolv_conf), so it lives below both, in lua/core/ip.lua
--- (`uphook.core.ip`); this module hands it on.
return require "uphook.core.ip"
