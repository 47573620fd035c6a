# Fails when the executable BINARY needs libQt6Widgets at run time: the model
# libraries (app/models, app/profiler/models) must stay free of widgets.
#   cmake -DBINARY=path/to/ModelsTest -P CheckNoWidgets.cmake
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES "${BINARY}"
  RESOLVED_DEPENDENCIES_VAR resolved
  UNRESOLVED_DEPENDENCIES_VAR unresolved)
foreach(dependency IN LISTS resolved unresolved)
  if(dependency MATCHES "Qt6Widgets")
    message(FATAL_ERROR "${BINARY} links ${dependency}: a model library "
      "depends on Qt Widgets. Move the widget code to a views library "
      "(app/views, app/profiler/views).")
  endif()
endforeach()
message(STATUS "${BINARY}: no Qt Widgets among its run-time dependencies")
