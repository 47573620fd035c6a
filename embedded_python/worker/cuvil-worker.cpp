//===- cuvil-worker.cpp - The Workbench's process for running user code ---===//
//
// Embeds CPython and hands control to cuvil._worker.serve(), which runs the
// user's model file and answers the Workbench's requests. Requests arrive as
// JSON lines on stdin; replies leave as JSON lines on file descriptor 3 (or
// $CUVIL_WORKER_FD), so that the user's own stdout and stderr stay on fds 1
// and 2 for the Workbench's console. A crash here takes only this process
// down.
//
// The interpreter is configured as the project's virtual environment's
// Python ($CUVIL_VENV, else <source>/.venv) so that NumPy and the cuvil
// package (through the venv's .pth) import as they do from a shell.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#ifndef CUVIL_SOURCE_DIR
#error "CUVIL_SOURCE_DIR must name the Cuvil source tree"
#endif

namespace {

bool isFile(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string envOr(const char *name, const std::string &fallback) {
  const char *value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

/// Reports a start-up failure on the protocol fd as well as stderr, so the
/// Workbench can show it.
void reportStartupFailure(int fd, const std::string &message) {
  std::fprintf(stderr, "cuvil-worker: %s\n", message.c_str());
  std::string json = "{\"type\": \"fatal\", \"message\": \"";
  for (char c : message) {
    if (c == '"' || c == '\\')
      json += '\\';
    json += c == '\n' ? ' ' : c;
  }
  json += "\"}\n";
  if (write(fd, json.data(), json.size()) < 0)
    std::perror("cuvil-worker");
}

bool checkStatus(PyStatus status, int fd) {
  if (!PyStatus_Exception(status))
    return true;
  reportStartupFailure(fd, std::string("Python did not start: ") +
                               (status.err_msg ? status.err_msg : "unknown") +
                               ". Set CUVIL_VENV to a virtual environment "
                               "with NumPy (scripts/setup.sh creates .venv).");
  return false;
}

/// When the Workbench named by $CUVIL_WORKBENCH_PID is no longer this
/// process's parent (it exited or was SIGKILLed), ends this worker's process
/// group: the worker and whatever the user's file started. A thread of its
/// own, outside Python, so a user loop holding the GIL cannot delay it.
void watchWorkbench() {
  std::string text = envOr("CUVIL_WORKBENCH_PID", "");
  int workbench = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), workbench);
  if (text.empty() || error != std::errc() ||
      end != text.data() + text.size() || workbench <= 1)
    return; // started by hand: nobody to watch
  std::thread([parent = static_cast<pid_t>(workbench)] {
    while (getppid() == parent)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::fprintf(stderr,
                 "cuvil-worker: the Workbench (pid %d) is gone; "
                 "ending this worker and what it started\n",
                 static_cast<int>(parent));
    // The Workbench makes the worker lead its own group; by hand, only this.
    kill(getpgrp() == getpid() ? -getpid() : getpid(), SIGKILL);
  }).detach();
}

/// Caps the worker's data (RLIMIT_DATA: heap and private writable mappings,
/// not address space a library only reserves, as CUDA and XLA do) so user
/// code that allocates without end gets a MemoryError (reported like any
/// exception) instead of taking the machine down: $CUVIL_WORKER_MEMORY_MB, else
/// three quarters of physical memory; 0 turns the limit off. The limit in MiB
/// goes to Python as $CUVIL_WORKER_MEMORY_LIMIT_MB for its messages.
void limitMemory() {
  // AddressSanitizer's shadow memory counts against RLIMIT_DATA: any cap
  // would make its next mapping fail. A worker running with ASan (built
  // with it, or with its runtime preloaded) runs without one.
  if (dlsym(RTLD_DEFAULT, "__asan_init"))
    return;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  unsigned long long mib =
      pages > 0 && pageSize > 0
          ? static_cast<unsigned long long>(pages) * pageSize / 4 * 3 >> 20
          : 0;
  std::string text = envOr("CUVIL_WORKER_MEMORY_MB", "");
  if (!text.empty()) {
    unsigned long long value = 0;
    auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() &&
        value < (1ull << 30))
      mib = value;
  }
  if (mib == 0)
    return;
  rlimit limit{static_cast<rlim_t>(mib << 20), static_cast<rlim_t>(mib << 20)};
  if (setrlimit(RLIMIT_DATA, &limit) == 0)
    setenv("CUVIL_WORKER_MEMORY_LIMIT_MB", std::to_string(mib).c_str(), 1);
}

} // namespace

int main(int argc, char **argv) {
  watchWorkbench();
  limitMemory();
  int fd = std::atoi(envOr("CUVIL_WORKER_FD", "3").c_str());
  if (fd <= 2 || fcntl(fd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "cuvil-worker: file descriptor %d (replies to the Workbench) "
                 "is not open. cuvil-worker is started by cuvil-workbench; to "
                 "try it by hand run `cuvil-worker 3>&1`.\n",
                 fd);
    return 2;
  }

  std::string sourceDir = envOr("CUVIL_SOURCE_DIR", CUVIL_SOURCE_DIR);
  std::string venv = envOr("CUVIL_VENV", sourceDir + "/.venv");
  std::string venvPython = venv + "/bin/python";

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.buffered_stdio = 0;          // user output reaches the console at once
  config.install_signal_handlers = 1; // SIGINT raises KeyboardInterrupt
  config.parse_argv = 0;
  PyStatus status;
  if (isFile(venvPython)) {
    // getpath finds pyvenv.cfg next to this "executable" and uses the venv's
    // site-packages.
    status = PyConfig_SetBytesString(&config, &config.program_name,
                                     venvPython.c_str());
    if (!checkStatus(status, fd))
      return 3;
  }
  status = PyConfig_SetBytesArgv(&config, argc, argv);
  if (checkStatus(status, fd))
    status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (!checkStatus(status, fd))
    return 3;

  // The source tree's package comes first even without the venv's .pth.
  std::string packageDir = sourceDir + "/embedded_python";
  PyObject *sysPath = PySys_GetObject("path"); // borrowed
  PyObject *entry = PyUnicode_DecodeFSDefault(packageDir.c_str());
  if (sysPath && entry)
    PyList_Insert(sysPath, 0, entry);
  Py_XDECREF(entry);

  int exitCode = 0;
  PyObject *module = PyImport_ImportModule("cuvil._worker");
  if (!module) {
    PyErr_Print();
    reportStartupFailure(
        fd, "cannot import cuvil._worker from " + packageDir + " with " +
                (isFile(venvPython) ? "the virtual environment " + venv
                                    : std::string("the system Python")) +
                " (see the traceback above). Create the environment with "
                "scripts/setup.sh or set CUVIL_VENV to one with NumPy, build "
                "the package with `make`, and check that CUVIL_SOURCE_DIR "
                "names the Cuvil source tree.");
    exitCode = 4;
  } else {
    PyObject *result = PyObject_CallMethod(module, "serve", "i", fd);
    if (!result) {
      PyErr_Print();
      exitCode = 5;
    } else {
      exitCode = static_cast<int>(PyLong_AsLong(result));
      Py_DECREF(result);
    }
    Py_DECREF(module);
  }
  if (Py_FinalizeEx() < 0 && exitCode == 0)
    exitCode = 120;
  return exitCode;
}
