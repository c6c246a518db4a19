# GUI units (offscreen): models under QAbstractItemModelTester, the window.
ckptscope_add_test(tst_naturalorder ckptscope_ui)
ckptscope_add_test(tst_tensortreemodel ckptscope_ui)
ckptscope_add_test(tst_metadatamodel ckptscope_ui)
ckptscope_add_test(tst_tensorvaluesmodel ckptscope_ui)
ckptscope_add_test(tst_histogramview ckptscope_ui)
ckptscope_add_test(tst_mainwindow ckptscope_ui)
