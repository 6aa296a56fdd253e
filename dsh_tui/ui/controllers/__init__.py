"""One controller per job of the main screen (see `screens/main.py` and `seams.py`)."""
