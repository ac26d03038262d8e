# Run by `cmake --install` (resources/CMakeLists.txt sets the STEPSCOPE_*
# variables before): installs stepscope.desktop with Exec and TryExec naming
# the launcher under the prefix being installed to, so the entry starts the
# app also where that bin/ is not on the desktop session's PATH.
set(_launcher "${CMAKE_INSTALL_PREFIX}/${STEPSCOPE_INSTALL_BINDIR}/stepscope")
file(STRINGS "${STEPSCOPE_DESKTOP_SOURCE}" _lines)
set(_entry "")
foreach(_line IN LISTS _lines)
    if(_line MATCHES "^Exec=stepscope( .*)?$")
        # Quoted, as the Desktop Entry spec asks for a path that may hold spaces.
        set(_line "Exec=\"${_launcher}\"${CMAKE_MATCH_1}")
    elseif(_line STREQUAL "TryExec=stepscope")
        set(_line "TryExec=${_launcher}")
    endif()
    string(APPEND _entry "${_line}\n")
endforeach()
file(WRITE "${STEPSCOPE_DESKTOP_STAGING}" "${_entry}")
file(INSTALL "${STEPSCOPE_DESKTOP_STAGING}"
     DESTINATION "${CMAKE_INSTALL_PREFIX}/${STEPSCOPE_INSTALL_DATADIR}/applications")
