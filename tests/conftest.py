"""The suite's expected texts are English: a Chinese locale on the machine that runs it must
not change them (the tests of the Chinese output ask for it with --lang zh or
i18n.language("zh")). Subprocesses inherit the cleaned environment."""

import os

for _variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
    if os.environ.get(_variable, "").lower().startswith("zh"):
        os.environ[_variable] = "C.UTF-8"
