"""Starts the child: ``python .../xlacli/child/boot RUN/request.json``.

Not ``python -m xlacli.child.child``: ``-m`` looks for ``xlacli`` in the
working folder first, so a checkout or a folder named ``xlacli`` in the
user's project ran another version's child (or none). Running this folder
puts only this folder first on ``sys.path``; it is replaced by the folder
holding this ``xlacli`` while the child imports, then by the working folder,
which the user's code finds first as it did under ``-m``. The frames above the
child's are runpy's, as under ``-m``.

Guarded: a process the model spawns (a DataLoader worker under the spawn
start method) runs this file again as ``__mp_main__``; it must do nothing.
"""

import os
import sys

if __name__ == "__main__":
    # .../xlacli/child/boot/__main__.py -> the folder holding xlacli
    here = os.path.abspath(__file__)
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    import xlacli.child.child as child

    sys.path[0] = os.getcwd()
    child.run_as_child(sys.argv)
