# The ctest fixtures of the gtest tests (included by CTestTestfile.cmake after their discovery,
# which names them): work that several tests read is done once per ctest run, by a setup test
# that ctest runs first (and runs too when only a test that reads it is selected).
function(rsb_fixture name setup)
  list(FIND GradeTests_long ${setup} found)
  if(found LESS 0)
    return()
  endif()
  set_tests_properties(${setup} PROPERTIES FIXTURES_SETUP ${name})
  foreach(t ${ARGN})
    list(FIND GradeTests_long ${t} found)
    if(found GREATER -1)
      set_tests_properties(${t} PROPERTIES FIXTURES_REQUIRED ${name})
    endif()
  endforeach()
endfunction()

# The small class graded once at --jobs 1 (tests/GradeFixture.h, GradedSmallClass): the
# baseline of the tests of other ways to grade it.
rsb_fixture(grade-small-class GradeShared.SmallClassIsGradedOnceForTheTestsThatCompareWithIt
            Grade.JobsGiveExactlyThePointsOfOneAtATime
            Grade.CheckPlatformValidatesElsewhereWithTheSamePointsAndTimesOnTheDevice)

# The student's hand-in packed once from the hand-out (tests/GradeFixture.h,
# StudentHandinArchive): the class the host-code tests unpack.
rsb_fixture(grade-student-handin GradeShared.StudentHandinIsPackedOnceFromTheHandout
            Grade.StudentHandinWithHostCodeGetsFullPointsBuiltInSeconds
            Grade.ClassFromTheHandoutLosesExactlyThePointsOfItsDefects)
