-- expect: 4 function
kube.apply({ kind = function() end })
