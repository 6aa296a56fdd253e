"""`dsh-tui serve`: the app in a browser, one app process per tab (through textual-serve),
open only to the holder of the link it prints (see `guard`)."""
