"""The names of tapeflow's SavedModel files and the version of their layout."""

FORMAT = "tapeflow.saved_model"
VERSION = 1
DOCUMENT_FILE = "saved_model.json"
VARIABLES_DIR = "variables"
VARIABLES_FILE = "variables/variables.npz"
CONSTANTS_FILE = "constants.npz"


class OutputSlot:
    """A function's output leaf, saved or loaded: the index of its value among the
    graph's outputs."""

    def __init__(self, index):
        self.index = index
