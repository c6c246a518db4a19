# GUI units (offscreen): models under QAbstractItemModelTester, the window.
ckptscope_add_test(tst_naturalorder ckptscope_ui)
ckptscope_add_test(tst_tensortreemodel ckptscope_ui)
ckptscope_add_test(tst_metadatamodel ckptscope_ui)
ckptscope_add_test(tst_tensorvaluesmodel ckptscope_ui)
ckptscope_add_test(tst_histogramview ckptscope_ui)
ckptscope_add_test(tst_mainwindow ckptscope_ui)
ckptscope_add_test(tst_nodetablemodel ckptscope_ui)
ckptscope_add_test(tst_hexmodel ckptscope_ui)
ckptscope_add_test(tst_graphpage ckptscope_ui)
ckptscope_add_test(tst_optimizerstateview ckptscope_ui)
ckptscope_add_test(tst_graphexport ckptscope_ui)
add_dependencies(tst_graphexport ckptscope-cli ckptscope)
# Defects of issue 10: file text shown exactly, cells that fit, the launch
# options (--select, --tab, --help without a display).
ckptscope_add_test(tst_tensorpage ckptscope_ui)
ckptscope_add_test(tst_tensorvaluesview ckptscope_ui)
ckptscope_add_test(tst_plaintext ckptscope_ui)
