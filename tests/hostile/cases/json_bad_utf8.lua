-- expect: 4 UTF-8
json.encode({ s = "\xff\xfe" })
