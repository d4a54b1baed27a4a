"""The COND paper's published numbers (``shared/papers``, Sec. V), which the benchmarks print beside ours.

Rows of Tables II, III, V and VI: MP [mm], IE [mN] (II, III) or FE [N] (V, VI), DT [ms], ST [ms], the
Delassus assembly part of ST [ms] (None for COND, which has none), IN. Table VI's DE column is left out.
"""

#: Table IV: mean iterations gripping balls of E = 0.1, 1, 10 MPa
PAPER_TABLE_IV = {"youngs_modulus_mpa": [0.1, 1.0, 10.0], "COND": [39.72, 37.93, 34.99], "PGS": [145.8, 224.0, 306.7],
                  "APGD": [48.07, 100.9, 200.5]}

#: Table IX: mean V-FPI iterations without and with Chebyshev acceleration, per scene
PAPER_TABLE_IX = {"Franka mat": [167.4, 39.72], "Gripper ball": [138.8, 37.51], "Franka cable": [40.14, 18.28],
                  "Soft gripper": [155.7, 30.88]}

PAPER = {
    "II soft_mat": {"COND": [0.0033, 1.868, 9.568, 8.650, None, 39.72],
                    "PGS": [0.0328, 0.917, 9.599, 1412, 898, 50.59], "APGD": [0.0576, 1.492, 9.563, 1645, 890, 81.57]},
    "III soft_ball": {"COND": [0.0058, 156.0, 18.61, 8.464, None, 37.51],
                      "PGS": [1.9933, 318.9, 18.51, 805.1, 624, 233.9],
                      "APGD": [0.2325, 123.5, 18.43, 676.7, 626, 100.4]},
    "V panda_cable": {"COND": [0.0021, 0.3996, 2.086, 1.229, None, 18.28],
                      "PGS": [0.0521, 0.3997, 2.103, 74.27, 28.2, 65.61],
                      "APGD": [0.0556, 0.3976, 2.112, 56.72, 27.9, 46.05]},
    "VI soft_gripper": {"COND": [0.0005, 0.1169, 43.24, 18.24, None, 30.88],
                        "PGS": [0.0397, 0.1175, 42.89, 547.0, 533, 59.06],
                        "APGD": [0.0409, 0.1172, 42.78, 547.3, 533, 57.81]},
    "IV": PAPER_TABLE_IV,
    "columns": ["MP_mm", "IE_mN or FE_N", "DT_ms", "ST_ms", "ST_delassus_ms", "IN"],
    "fig11": "COND solver time linear in DOF (R^2 0.9997); PGS/APGD super-linear",
}
