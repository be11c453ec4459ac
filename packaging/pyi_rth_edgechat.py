# PyInstaller runtime hook: runs before EdgeChat's own code in the bundle. The app starts its
# engine process with multiprocessing ("spawn"); in a frozen app the child is the same
# executable, and freeze_support() turns it into the engine process instead of a second app.
import multiprocessing

multiprocessing.freeze_support()
