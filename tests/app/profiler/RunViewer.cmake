# Runs cuvil-profile-viewer and checks what CTest's properties cannot check
# together: the exit status AND the output, and that a screenshot was saved.
#   cmake -DVIEWER=... -DARGS="a;b" [-DPNG=out.png]
#         [-DFAIL_REGEX=regex] -P RunViewer.cmake
# With FAIL_REGEX the viewer must exit non-zero and print a match; otherwise
# it must exit 0 and write PNG, a real PNG file (its 8-byte signature).
if(PNG)
  file(REMOVE ${PNG}) # a picture left by an earlier run proves nothing
endif()
execute_process(COMMAND ${VIEWER} ${ARGS} RESULT_VARIABLE status
  OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(FAIL_REGEX)
  if(status EQUAL 0)
    message(FATAL_ERROR "the viewer exited 0; it must fail on this input")
  endif()
  if(NOT out MATCHES "${FAIL_REGEX}")
    message(FATAL_ERROR "the viewer's output does not match '${FAIL_REGEX}'")
  endif()
  return()
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the viewer failed with status ${status}")
endif()
if(NOT EXISTS ${PNG})
  message(FATAL_ERROR "the viewer did not write ${PNG}")
endif()
file(READ ${PNG} signature LIMIT 8 HEX)
if(NOT signature STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "${PNG} is not a PNG file (starts with ${signature})")
endif()
file(SIZE ${PNG} bytes)
if(bytes LESS 1000)
  message(FATAL_ERROR "${PNG} holds only ${bytes} bytes")
endif()
